import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  killAll,
  type RedisServer,
  spawnCluster,
  startRedis,
} from '@sundial/testing';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * The attack `apps/scheduler/src/cross-site.ts` stops, in a real browser: a page on another site
 * (127.0.0.1, the scheduler called as localhost) POSTs a TimerSpec as text/plain with `no-cors`,
 * which needs no preflight, to a scheduler without SUNDIAL_API_TOKEN. Nothing is written.
 */
describe('a cross-site page in chromium against a scheduler without a token', () => {
  let redis: RedisServer;
  let scheduler: AppProcess;
  let site: Server;
  let browser: Browser;

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    [scheduler] = (await spawnCluster(clusterEnv(redis.url), 1, 0)).schedulers;
    site = createServer((_request, response) => response.end('<!doctype html><title>elsewhere</title>'));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.close(resolve));
    await killAll(scheduler ? [scheduler] : []);
    await redis?.stop();
  });

  it('cannot schedule a timer through a no-cors text/plain POST', async () => {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
    const target = new URL(scheduler.url);
    target.hostname = 'localhost';
    await page.evaluate(async (api) => {
      const spec = { key: 'csrf:made', handler: 'log', delay: '1h' };
      const init = { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' } } as const;
      await fetch(`${api}/v1/timers`, { ...init, body: JSON.stringify(spec) });
    }, target.origin);
    const made = await fetch(`${scheduler.url}/v1/timers/csrf%3Amade`);
    expect(made.status).toBe(404);
  });
});
