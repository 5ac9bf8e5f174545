import type { TimerContext } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpHandler } from './http.handler';

/**
 * The `http` handler reads an answer's status and drops its body (docs/spec.md §5.3): the connection
 * closes once the status is read, so a listed host that streams without end holds no socket of the
 * worker after the run is over (until `timeoutMs`, up to 24 days).
 */
describe('http handler: the answer', () => {
  let server: Server;
  let port: number;
  let closed = false;

  beforeAll(async () => {
    server = createServer((_request, response) => {
      response.on('close', () => (closed = true));
      response.writeHead(200);
      const drip = setInterval(() => response.write('x'.repeat(1024)), 10);
      response.on('close', () => clearInterval(drip));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('an endless body is not read: the run completes and the connection closes at once', async () => {
    const handler = createHttpHandler([`127.0.0.1:${port}`]);
    const ctx = { signal: new AbortController().signal } as TimerContext;
    await handler({ url: `http://127.0.0.1:${port}/stream`, timeoutMs: 600_000 }, ctx);
    await waitFor(() => closed, { timeoutMs: 2000, what: 'the target to see its connection closed' });
  });
});
