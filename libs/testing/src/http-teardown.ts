import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * The client sockets this process opens to a test's HTTP server, to wait for at teardown.
 * `server.close()` calls back once the server's side of each connection is closed; the client's side
 * (fetch's pooled keep-alive socket, a request's socket) closes only when it reads the FIN, a moment
 * later. A suite that ends in between leaves an open TCP handle in jest's worker, which may then fail
 * to exit within jest's 500 ms and be force-exited. Call once the server listens, before the suite's
 * first request (node's `net.client.socket` channel reports each client socket, fetch's included);
 * after the server is closed, `closed()` resolves when every one of them has closed.
 */
export function trackClientSockets(server: Server): { closed(): Promise<void> } {
  const { port } = server.address() as AddressInfo;
  const clients = new Set<Socket>();
  const onSocket = (message: unknown) => {
    const { socket } = message as { socket: Socket };
    socket.once('connect', () => {
      if (socket.remotePort === port) clients.add(socket);
    });
  };
  subscribe('net.client.socket', onSocket);
  return {
    async closed() {
      unsubscribe('net.client.socket', onSocket);
      const open = [...clients].filter((socket) => !socket.closed);
      await Promise.all(open.map((socket) => new Promise((closed) => socket.once('close', closed))));
    },
  };
}
