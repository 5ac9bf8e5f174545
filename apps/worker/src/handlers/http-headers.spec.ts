import type { JsonValue, TimerContext } from '@sundial/core';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpHandler } from './http.handler';

/**
 * What the `http` handler sends of a payload's headers (docs/spec.md §5.3): none that would send the
 * request elsewhere than the URL checked (Host) or frame it differently (smuggling), and no credentials
 * on to another origin by a redirect. Two local servers stand for two allowed origins.
 */
describe('http handler: the headers it sends', () => {
  const servers: Server[] = [];
  const ports: number[] = [];
  const received: { port: number; url: string; method: string; headers: IncomingMessage['headers'] }[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const server = createServer((request, response) => {
        const port = (server.address() as AddressInfo).port;
        received.push({ port, url: request.url!, method: request.method!, headers: request.headers });
        request.resume();
        const to = new URL(request.url!, 'http://x').searchParams.get('to');
        if (to)
          response.writeHead(Number(new URL(request.url!, 'http://x').searchParams.get('status') ?? 302), {
            location: to,
          });
        else response.writeHead(204);
        response.end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      servers.push(server);
      ports.push((server.address() as AddressInfo).port);
    }
  });
  afterAll(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));
  beforeEach(() => (received.length = 0));

  const handler = () => createHttpHandler(ports.map((port) => `127.0.0.1:${port}`));
  const run = (payload: JsonValue) =>
    Promise.resolve(handler()(payload, { signal: new AbortController().signal } as TimerContext));
  const origin = (i: number) => `http://127.0.0.1:${ports[i]}`;
  const redirect = (from: number, to: string, status = 302) =>
    `${origin(from)}/r?status=${status}&to=${encodeURIComponent(to)}`;

  it.each([
    ['Host', 'admin.internal'],
    ['content-length', '0'],
    ['Transfer-Encoding', 'chunked'],
    ['Connection', 'keep-alive, x-forwarded-for'],
    ['upgrade', 'websocket'],
  ])('refuses a payload setting %s, calling nothing', async (name, value) => {
    await expect(
      run({ url: `${origin(0)}/hook`, method: 'POST', headers: { [name]: value }, body: 'GET /x HTTP/1.1' }),
    ).rejects.toMatchObject({
      reason: 'invalid',
      field: 'payload.headers',
      message: expect.stringContaining(name),
      fix: expect.stringContaining('Host'),
    });
    expect(received).toEqual([]);
  });

  const credentials = { authorization: 'Bearer s3cret', Cookie: 'session=1', 'x-trace': 'kept' };

  it('drops Authorization and Cookie on a redirect to another origin', async () => {
    await run({ url: redirect(0, `${origin(1)}/landed`), headers: credentials });
    expect(received.map((entry) => entry.port)).toEqual([ports[0], ports[1]]);
    expect(received[0].headers).toMatchObject({ authorization: 'Bearer s3cret', cookie: 'session=1' });
    expect(received[1].headers.authorization).toBeUndefined();
    expect(received[1].headers.cookie).toBeUndefined();
    expect(received[1].headers['x-trace']).toBe('kept');
  });

  it('keeps them on a redirect within the origin', async () => {
    await run({ url: redirect(0, '/landed'), headers: credentials });
    expect(received[1]).toMatchObject({
      url: '/landed',
      headers: { authorization: 'Bearer s3cret', cookie: 'session=1' },
    });
  });

  it('a 303 after a POST goes on as a GET without the body or its Content-Type', async () => {
    await run({ url: redirect(0, '/landed', 303), body: { a: 1 } });
    expect(received[0]).toMatchObject({ method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(received[1].method).toBe('GET');
    expect(received[1].headers['content-type']).toBeUndefined();
    expect(received[1].headers['content-length']).toBeUndefined();
  });

  it('refuses a timeoutMs longer than a timer can wait (Node would fire it at once)', async () => {
    await expect(run({ url: `${origin(0)}/hook`, timeoutMs: 1e12 })).rejects.toMatchObject({
      reason: 'invalid',
      field: 'payload.timeoutMs',
      message: expect.stringContaining('2147483647'),
    });
    expect(received).toEqual([]);
  });
});
