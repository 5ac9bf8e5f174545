import { connect } from 'node:net';

/** Whether a TCP connection to host:port is taken (false: refused or failed): whether anything listens. */
export function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
