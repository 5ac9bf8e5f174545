import type { Timer } from '@sundial/core';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keyPath, type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import { type RunningApp, startScheduler, startWorker } from '../local-cluster';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** The worker's built-in `http` handler against a real local server, allowed by SUNDIAL_HTTP_ALLOW. */
describe('built-in http handler', () => {
  let redis: RedisServer;
  let target: Server;
  let targetPort: number;
  let scheduler: RunningApp;
  let worker: RunningApp;
  const received: Received[] = [];

  beforeAll(async () => {
    target = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ method: request.method!, url: request.url!, headers: request.headers, body });
        if (request.url === '/fail') response.writeHead(500).end('nope');
        else if (request.url === '/redirect-out') {
          response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
        } else response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetPort = (target.address() as AddressInfo).port;
    redis = await startRedis();
    [scheduler, worker] = await Promise.all([
      startScheduler(redis.url),
      startWorker(redis.url, {}, { httpAllow: [`127.0.0.1:${targetPort}`] }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([scheduler?.close(), worker?.close()]);
    await redis?.stop();
    await new Promise((resolve) => target?.close(resolve));
  });

  /** Schedules an `http` timer due at once, kept after its run, and resolves with its settled row. */
  async function runHttpTimer(key: string, payload: Record<string, unknown>): Promise<Timer> {
    const created = await scheduler.api('POST', '/v1/timers', {
      key,
      handler: 'http',
      delay: 0,
      payload,
      removeOnComplete: false,
    });
    expect(created.status).toBe(201);
    return waitFor(async () => {
      const timer = (await scheduler.api<Timer>('GET', keyPath(key))).body;
      return (timer.status === 'completed' || timer.status === 'failed') && timer;
    });
  }

  it('calls an allowed host: method, headers and JSON body arrive; a 2xx completes the timer', async () => {
    const timer = await runHttpTimer('http:ok', {
      url: `http://127.0.0.1:${targetPort}/hook?x=1`,
      method: 'PUT',
      headers: { 'x-sundial-test': 'yes' },
      body: { hello: 'world' },
    });
    expect(timer).toMatchObject({ status: 'completed', runCount: 1, last: { status: 'ok' } });
    const request = received.find((entry) => entry.url === '/hook?x=1');
    expect(request).toMatchObject({ method: 'PUT', body: '{"hello":"world"}' });
    expect(request?.headers).toMatchObject({ 'x-sundial-test': 'yes', 'content-type': 'application/json' });
  });

  it('a non-2xx answer fails the run with the status in the error', async () => {
    const timer = await runHttpTimer('http:500', { url: `http://127.0.0.1:${targetPort}/fail` });
    expect(timer.status).toBe('failed');
    expect(timer.last?.error?.message).toContain('500');
  });

  it.each([
    ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data'],
    ['an allowed host on a port not listed', 'http://127.0.0.1:1/'],
  ])('refuses %s with reason forbidden-target, without calling it', async (_name, url) => {
    const before = received.length;
    const timer = await runHttpTimer(`http:forbidden:${new URL(url).port || 'meta'}`, { url });
    expect(timer).toMatchObject({
      status: 'failed',
      last: { status: 'failed', error: { reason: 'forbidden-target' } },
    });
    expect(received.length).toBe(before);
  });

  it('does not follow a redirect to a host that is not allowed', async () => {
    const timer = await runHttpTimer('http:redirect', { url: `http://127.0.0.1:${targetPort}/redirect-out` });
    expect(timer.last?.error?.reason).toBe('forbidden-target');
    expect(received.filter((entry) => entry.url === '/redirect-out')).toHaveLength(1);
  });
});
