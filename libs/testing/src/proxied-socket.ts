import { Socket } from 'node:net';

/**
 * The upstream half of a test proxy's connection (ReplyDropper, CommandGate, the chaos suite's ReplyProxy): a socket to `target` for
 * `client`, both kept in `sockets` (for the proxy's stop) until either ends, which ends the other too.
 * Returns the upstream socket and the close that ends both.
 */
export function proxiedSocket(
  client: Socket,
  target: { host?: string; port: number },
  sockets: Set<Socket>,
): { server: Socket; close: () => void } {
  const server = new Socket();
  sockets.add(client).add(server);
  const close = () => {
    client.destroy();
    server.destroy();
    sockets.delete(client);
    sockets.delete(server);
  };
  client.on('error', close).on('close', close);
  server.on('error', close).on('close', close);
  server.connect(target.port, target.host ?? '127.0.0.1');
  return { server, close };
}
