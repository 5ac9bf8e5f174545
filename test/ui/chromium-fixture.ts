import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  type HttpClient,
  httpClient,
  killAll,
  type RedisServer,
  spawnCluster,
  startRedis,
} from '@sundial/testing/harness';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's `chromium` package (.ci/run installs it when missing); CHROMIUM_PATH points elsewhere. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface ChromiumFixture {
  readonly browser: Browser;
  /** the scheduler, without SUNDIAL_API_TOKEN, as `npm start` runs it */
  readonly scheduler: AppProcess;
  /** another site, on 127.0.0.1: its origin */
  readonly siteUrl: string;
}

/**
 * For the suite that calls it (beforeAll/afterAll): a private Redis, one built scheduler on it without
 * a token, another site answering with `site`, and chromium launched with `args` besides --no-sandbox.
 */
export function useSchedulerInChromium(site: RequestListener, args: string[] = []): ChromiumFixture {
  let redis: RedisServer | undefined;
  let scheduler: AppProcess | undefined;
  let server: Server | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    [scheduler] = (await spawnCluster(clusterEnv(redis.url), 1, 0)).schedulers;
    server = createServer(site);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', ...args] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await killAll(scheduler ? [scheduler] : []);
    await redis?.stop();
  });

  return {
    get browser() {
      return browser!;
    },
    get scheduler() {
      return scheduler!;
    },
    get siteUrl() {
      return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
    },
  };
}

export interface ClusterPage {
  readonly page: Page;
  /** the scheduler's API, without a token */
  readonly api: HttpClient;
  /** the operator UI's root, `http://…/ui/` */
  readonly ui: string;
  /** Opens the timer page of `key`; its heading with `status` is awaited (a deadline: the page's 10 s default). */
  openTimer(key: string, status: string): Promise<void>;
}

/** A private Redis, one built scheduler (no token) and one worker with the test handlers, and chromium. */
export interface ChromiumCluster {
  readonly browser: Browser;
  /** the scheduler's root, `http://127.0.0.1:…` */
  readonly url: string;
}

/**
 * For the suite that calls it (beforeAll/afterAll): a private Redis, one built scheduler (no token) and
 * one worker with the test handlers (`record`), as child processes, and chromium; `env` is added to the
 * apps' (clusterEnv), e.g. a SUNDIAL_SCHEDULES_FILE. Pages come from usePage, one per describe block.
 */
export function useChromiumCluster(env: Record<string, string> = {}): ChromiumCluster {
  let redis: RedisServer | undefined;
  let apps: { schedulers: AppProcess[]; workers: AppProcess[] } | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    apps = await spawnCluster(clusterEnv(redis.url, env), 1, 1);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await killAll([...(apps?.schedulers ?? []), ...(apps?.workers ?? [])]);
    await redis?.stop();
  });

  return {
    get browser() {
      return browser!;
    },
    get url() {
      return apps!.schedulers[0].url;
    },
  };
}

/**
 * For the describe block that calls it: a page of `width`×900 with a 10 s default timeout, in a browser
 * context of its own on `cluster` (its own routes, init scripts, dialogs and storage), closed after it.
 */
export function usePage(cluster: ChromiumCluster, width = 1280): ClusterPage {
  let context: BrowserContext | undefined;
  let page: Page | undefined;

  beforeAll(async () => {
    context = await cluster.browser.newContext({ viewport: { width, height: 900 } });
    page = await context.newPage();
    // well inside jest's 30 s per test, so a missing element fails with its own message
    page.setDefaultTimeout(10_000);
  });

  afterAll(() => context?.close());

  return {
    get page() {
      return page!;
    },
    get api() {
      return httpClient(cluster.url);
    },
    get ui() {
      return `${cluster.url}/ui/`;
    },
    async openTimer(key, status) {
      await page!.goto(`${cluster.url}/ui/#/timer/${encodeURIComponent(key)}`);
      await page!.getByRole('heading', { level: 1, name: `${key} ${status}` }).waitFor();
    },
  };
}
