import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DIST,
  ensureBuilt,
  type OutsideApp,
  outsideApp,
  type RedisServer,
  ROOT,
  startRedis,
} from '@sundial/testing/harness';

/**
 * README "Use it from your Nest app", followed by a user whose app lives outside this checkout: the
 * README's code, compiled with the user's own strict tsc against the libraries as `npm install
 * --install-links <checkout>/dist/libs/<lib>/src` leaves them (a copy of each folder in
 * node_modules/@sundial), then booted on Redis. Only what the README shows is used, as it is (its Invoice
 * and Mailer included); the app's other packages (@nestjs/*, ioredis…) come from this checkout's
 * node_modules, one directory up, as an app's own node_modules would hold them.
 */
const LIBS = ['core', 'redis', 'client', 'testing'];
const SETUP_DEADLINE_MS = 120_000;
/** What a Nest app's tsconfig adds to the user's strict one. */
const DECORATORS = { experimentalDecorators: true, emitDecoratorMetadata: true };

/** The README's code block under "### Use it from your Nest app". */
function readmeSnippet(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Use it from your Nest app'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README "Use it from your Nest app" has no ts code block');
  return block[1];
}

/** The TypeScript blocks of the README's usage sections and of the spec's in-memory engine (§5.1a). */
const USAGE_BLOCKS = [
  ['README.md', '### In one process'],
  ['README.md', '### Across processes'],
  ['docs/spec.md', '### 5.1a The in-memory engine'],
];

/**
 * Each of USAGE_BLOCKS as a module of the app: its imports, then its code as the body of an async function
 * (it awaits at top level). Compiled, not run. Nothing is added: a name the block uses but does not
 * define or import fails the compile, as it would for a user typing it in.
 */
function usageModules(): string[] {
  return USAGE_BLOCKS.map(([file, heading]) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const block = /```ts\n([\s\S]*?)```/.exec(text.slice(text.indexOf(heading)));
    if (!text.includes(heading) || !block) throw new Error(`${file} "${heading}" has no ts code block`);
    const lines = block[1].split('\n');
    return [
      ...lines.filter((line) => line.startsWith('import ')),
      'export async function usage(): Promise<void> {',
      ...lines.filter((line) => !line.startsWith('import ')),
      '}',
    ].join('\n');
  });
}

const MAIN = `
import { NestFactory } from '@nestjs/core';
import { Timers } from '@sundial/client';
import { AppModule, InvoiceReminders } from './app';

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error'] });
  const timer = await app.get(InvoiceReminders).remindLater({ id: 42 });
  const cron = await app.get(Timers).get('cron:invoices.digest');
  const nest = require.resolve('@nestjs/common');
  const nestOfClient = require.resolve('@nestjs/common', { paths: [require.resolve('@sundial/client')] });
  console.log(JSON.stringify({ timer, cron, nest, nestOfClient, client: require.resolve('@sundial/client') }));
  await app.close();
}
main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;

interface BootReport {
  timer: { key: string; handler: string; status: string; payload: unknown };
  cron: { key: string; cron: string; tz: string; meta: Record<string, string> } | null;
  nest: string;
  nestOfClient: string;
  client: string;
}

describe('README "Use it from your Nest app" in an app outside the checkout', () => {
  let redis: RedisServer;
  let outside: OutsideApp;
  let app: string;
  let tsc: OutsideApp['tsc'];

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    const usage = Object.fromEntries(usageModules().map((code, i) => [`usage${i}.ts`, code]));
    outside = outsideApp(LIBS, { 'app.ts': readmeSnippet(), 'main.ts': MAIN, ...usage }, DECORATORS);
    ({ app, tsc } = outside);
  }, SETUP_DEADLINE_MS);

  afterAll(async () => {
    await redis?.stop();
    outside?.remove();
  });

  it('ships each library with a package.json whose entry and declarations exist', () => {
    for (const lib of LIBS) {
      const folder = join(DIST, 'libs', lib, 'src');
      const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
      expect({ name: manifest.name, main: existsSync(join(folder, manifest.main)) }).toEqual({
        name: `@sundial/${lib}`,
        main: true,
      });
      expect(existsSync(join(folder, manifest.types))).toBe(true);
    }
  });

  it('asks for its peers as ranges: an app installs the newest bullmq, ioredis… of a range', () => {
    // `npm install @nestjs/bullmq` brings the newest bullmq 6.x; a peer pinned to one version (bullmq
    // 6.7.0) refuses it (ERESOLVE) and stops the README's `npm install` of the libraries.
    const exact = LIBS.flatMap((lib) => {
      const manifest = JSON.parse(readFileSync(join(DIST, 'libs', lib, 'src', 'package.json'), 'utf8'));
      return Object.entries<string>(manifest.peerDependencies ?? {})
        .filter(([, range]) => /^\d+\.\d+\.\d+$/.test(range))
        .map(([name, range]) => `@sundial/${lib}: ${name} ${range}`);
    });
    expect(exact).toEqual([]);
  });

  it('names as peers the @sundial libraries its code requires: npm installs them beside it', () => {
    // A library that requires another one it does not name installs without complaint and then fails
    // at its first import in the app (`Cannot find module '@sundial/core'`).
    const unnamed = LIBS.flatMap((lib) => {
      const folder = join(DIST, 'libs', lib, 'src');
      const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
      const named = new Set(Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }));
      const required = new Set<string>();
      for (const file of readdirSync(folder, { recursive: true, encoding: 'utf8' })) {
        if (!file.endsWith('.js')) continue;
        for (const [, other] of readFileSync(join(folder, file), 'utf8').matchAll(
          /require\("(@sundial\/[a-z]+)/g,
        )) {
          if (other !== `@sundial/${lib}`) required.add(other);
        }
      }
      return [...required]
        .filter((other) => !named.has(other))
        .map((other) => `@sundial/${lib} requires ${other}`);
    });
    expect(unnamed).toEqual([]);
  });

  it("compiles with the user's strict tsc, and so do the engine and RedisTimers blocks", () => {
    expect(tsc.output).toBe('');
    expect(tsc.status).toBe(0);
  });

  it('boots on Redis: the cron row from config, a timer scheduled, one @nestjs/common', () => {
    const run = spawnSync(process.execPath, [join(app, 'dist', 'main.js')], {
      cwd: app,
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, REDIS_URL: redis.url, DIGEST_CRON: '0 9 * * *' },
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout.trim().split('\n').pop()!) as BootReport;
    expect(report.cron).toMatchObject({
      key: 'cron:invoices.digest',
      cron: '0 9 * * *',
      tz: 'Europe/Paris',
      meta: { sundialOwner: 'distributed-cron' },
    });
    expect(report.timer).toMatchObject({
      key: 'invoice:42:remind',
      handler: 'invoice.remind',
      status: 'pending',
      payload: { id: 42 },
    });
    expect(report.client.startsWith(join(app, 'node_modules', '@sundial', 'client'))).toBe(true);
    expect(report.nestOfClient).toBe(report.nest);
  });
});
