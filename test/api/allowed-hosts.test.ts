import { type RedisServer, rawHttp, startRedis } from '@sundial/testing/harness';
import Redis from 'ioredis';
import { parseAllowedHosts } from '@sundial/server';
import { type RunningApp, startScheduler } from '../local-cluster';

/**
 * DNS rebinding (docs/spec.md §5.2): a web page whose own name the attacker makes resolve to a
 * scheduler's address is same-origin to the browser, so the cross-site check lets its writes through
 * and it reads every answer. Its requests carry that name in `Host`: a scheduler refuses a `Host` that
 * is not an IP address, localhost, a single label or a name in SUNDIAL_ALLOWED_HOSTS, with 403
 * `forbidden` on `host`, before anything is read or written. Real requests on a socket, each with the
 * Host a browser would send.
 */
describe('the Host a request names (DNS rebinding)', () => {
  let redis: RedisServer;
  let raw: Redis;
  let open: RunningApp;
  let listed: RunningApp;
  const spec = JSON.stringify({ key: 'rebind:k', handler: 'log', delay: '1h' });

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    // As `npm start` runs it: no token, SUNDIAL_ALLOWED_HOSTS unset.
    [open, listed] = await Promise.all([
      startScheduler(redis.url),
      startScheduler(redis.url, {
        allowedHosts: parseAllowedHosts(['Sundial.Example.com.', '*.internal.example'], false),
      }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([open?.close(), listed?.close()]);
    raw?.disconnect();
    await redis?.stop();
  });

  /** What a browser page at `http://<host>` sends: same-origin to it, a POST with the spec or a GET. */
  const send = (
    app: RunningApp,
    host: string,
    method = 'POST',
    path = '/v1/timers',
  ): ReturnType<typeof rawHttp> => {
    const body = method === 'POST' ? spec : '';
    return rawHttp(
      Number(new URL(app.url).port),
      `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\nSec-Fetch-Site: same-origin\r\n` +
        (body ? `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : '') +
        `Connection: close\r\n\r\n${body}`,
    );
  };

  it.each([
    ['a rebound name', 'attacker.example:3000', 'POST', '/v1/timers'],
    ['a rebound name, read', 'rebind.attacker.example', 'GET', '/v1/timers'],
    ['a name like localhost', 'localhost.attacker.example', 'POST', '/v1/timers'],
    ['a rebound name on /metrics', 'attacker.example', 'GET', '/metrics'],
    ['a rebound name on the UI', 'attacker.example', 'GET', '/ui/'],
  ])('%s is refused 403 forbidden on host, nothing written', async (_name, host, method, path) => {
    const before = (await raw.keys('*')).sort();
    const reply = await send(open, host, method, path);
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body)).toEqual({
      error: {
        reason: 'forbidden',
        field: 'host',
        message: expect.stringContaining(`the Host header "${host}" is not a name this scheduler answers to`),
        fix: expect.stringContaining('add it to SUNDIAL_ALLOWED_HOSTS'),
      },
    });
    expect((await raw.keys('*')).sort()).toEqual(before);
  });

  it('IP addresses, localhost, *.localhost and single labels (probes, compose, a namespace) go on', async () => {
    const port = new URL(open.url).port;
    for (const host of [
      `127.0.0.1:${port}`,
      '10.1.2.3:3000',
      `[::1]:${port}`,
      'localhost',
      'ui.localhost:3000',
      'scheduler:3000',
      'LOCALHOST.',
    ]) {
      expect({ host, status: (await send(open, host, 'GET', '/health/live')).status }).toEqual({
        host,
        status: 200,
      });
    }
    expect((await send(open, 'localhost:3000')).status).toBe(201);
    // HTTP/1.0 without Host (no browser sends one so)
    const bare = await rawHttp(Number(new URL(open.url).port), 'GET /health/live HTTP/1.0\r\n\r\n');
    expect(bare.status).toBe(200);
  });

  it('SUNDIAL_ALLOWED_HOSTS adds names and *.domain suffixes, in any case; nothing else', async () => {
    for (const host of ['sundial.example.com', 'SUNDIAL.example.com:443', 'a.b.internal.example']) {
      expect({ host, status: (await send(listed, host, 'GET', '/v1/timers')).status }).toEqual({
        host,
        status: 200,
      });
    }
    for (const host of [
      'example.com',
      'internal.example',
      'evil-internal.example',
      'sundial.example.com.evil',
    ]) {
      expect({ host, status: (await send(listed, host, 'GET', '/v1/timers')).status }).toEqual({
        host,
        status: 403,
      });
    }
  });
});

describe('SUNDIAL_ALLOWED_HOSTS as read at start', () => {
  it('unset: no name besides the ones always allowed; with an API token, any name; `*` any', () => {
    expect(parseAllowedHosts([], false)).toEqual([]);
    expect(parseAllowedHosts([], true)).toBe('any');
    expect(parseAllowedHosts(['a.example', '*'], false)).toBe('any');
  });

  it.each([
    'https://sundial.example.com',
    'sundial.example.com:3000',
    'a..example',
    '*.',
    'a.*.example',
    'sun dial',
  ])('refuses %s, naming the variable and what to write', (entry) => {
    expect(() => parseAllowedHosts([entry], false)).toThrow(
      expect.objectContaining({
        reason: 'invalid',
        field: 'SUNDIAL_ALLOWED_HOSTS',
        message: expect.stringContaining(JSON.stringify(entry)),
        fix: expect.stringContaining('comma-separated'),
      }),
    );
  });
});
