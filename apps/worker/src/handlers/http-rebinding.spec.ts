import type { TimerContext, TimerHandler } from '@sundial/core';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpHandler, type Resolver } from './http.handler';

/**
 * Defect 10 of issue 8 (DNS rebinding): the `http` handler resolves a name once, checks the ADDRESS,
 * and connects to that address. Every resolver here is injected: no traffic leaves 127.0.0.1.
 */
describe('http handler: the address a name resolves to', () => {
  let server: Server;
  let port: number;
  const received: IncomingMessage['headers'][] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      received.push(request.headers);
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => (received.length = 0));

  /** A resolver that answers from a table, and counts its calls. */
  function resolver(...answers: string[]): Resolver & { calls: string[] } {
    const calls: string[] = [];
    const resolve = async (hostname: string) => {
      calls.push(hostname);
      const address = answers[Math.min(calls.length, answers.length) - 1];
      return { address, family: address.includes(':') ? 6 : 4 };
    };
    return Object.assign(resolve, { calls });
  }

  function run(handler: TimerHandler, url: string): Promise<unknown> {
    const ctx = { signal: new AbortController().signal } as TimerContext;
    return Promise.resolve(handler({ url }, ctx));
  }

  it('refuses a name allowed by name that resolves to a private address, before any connection', async () => {
    const resolve = resolver('10.0.0.1');
    const handler = createHttpHandler([`localhost:${port}`], { resolve });
    await expect(run(handler, `http://localhost:${port}/`)).rejects.toMatchObject({
      reason: 'forbidden-target',
      message: expect.stringContaining('10.0.0.1'),
    });
    expect(resolve.calls).toEqual(['localhost']);
    expect(received).toEqual([]);
  });

  it.each(['127.0.0.1', '169.254.169.254', '192.168.1.10', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1', '::1'])(
    'refuses a name allowed only by name that resolves to %s',
    async (address) => {
      const handler = createHttpHandler([`localhost:${port}`], { resolve: resolver(address) });
      await expect(run(handler, `http://localhost:${port}/`)).rejects.toMatchObject({
        reason: 'forbidden-target',
      });
      expect(received).toEqual([]);
    },
  );

  it('calls a loopback address when that address is allowed too, keeping the Host header', async () => {
    const resolve = resolver('127.0.0.1');
    const handler = createHttpHandler([`localhost:${port}`, `127.0.0.1:${port}`], { resolve });
    await run(handler, `http://localhost:${port}/hook`);
    expect(received).toEqual([expect.objectContaining({ host: `localhost:${port}` })]);
    expect(resolve.calls).toEqual(['localhost']);
  });

  it('resolves once and connects to the address it checked, whatever a second lookup would say', async () => {
    const resolve = resolver('127.0.0.1', '10.0.0.1');
    const handler = createHttpHandler([`localhost:${port}`, `127.0.0.1:${port}`], { resolve });
    await run(handler, `http://localhost:${port}/`);
    expect(resolve.calls).toEqual(['localhost']);
    expect(received).toHaveLength(1);
  });

  it('an address entry allows that address on its port only', async () => {
    const handler = createHttpHandler([`localhost`, `127.0.0.1:1`], { resolve: resolver('127.0.0.1') });
    await expect(run(handler, `http://localhost:${port}/`)).rejects.toMatchObject({
      reason: 'forbidden-target',
    });
    expect(received).toEqual([]);
  });

  it('a literal address URL is checked as that address', async () => {
    const resolve = resolver('10.0.0.1');
    const handler = createHttpHandler([`127.0.0.1:${port}`], { resolve });
    await run(handler, `http://127.0.0.1:${port}/`);
    expect(resolve.calls).toEqual([]);
    expect(received).toHaveLength(1);
  });
});
