import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { DIST, ensureBuilt, type RedisServer, ROOT, startRedis } from '@sundial/testing/harness';

/**
 * The apps run on Nest 12, but `@sundial/client` promises Nest 11 as well (its peerDependencies in
 * libs/client/package.json). test/fixtures/nest11 is a Nest 11 app with its own node_modules, into
 * which the compiled libs are copied as `@sundial/<lib>`: `@nestjs/*` resolves there, as in a user's
 * Nest 11 project.
 */
const FIXTURE = join(ROOT, 'test', 'fixtures', 'nest11');
const SETUP_DEADLINE_MS = 180_000;

interface Resolved {
  path: string;
  version: string;
}
interface FixtureReport {
  app: Resolved;
  client: Resolved;
  runsAfter2d: number;
  runs: { key: string; due: number; payload: unknown }[];
  disposed: string;
  testing: {
    loaded: string[];
    runsAfter13d: number;
    runs: { key: string; due: number; payload: unknown }[];
    lines: Record<string, unknown>[];
  };
  bullmq: Resolved;
  redis: {
    run: { key: string; version: number; payload: unknown; signal: boolean };
    status: string;
    last: string;
  };
}

/** `npm ci` in the fixture when its node_modules is missing or older than its lockfile. */
function installFixture(): void {
  const installed = join(FIXTURE, 'node_modules', '.package-lock.json');
  const lock = join(FIXTURE, 'package-lock.json');
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(lock).mtimeMs) return;
  const npm = spawnSync('npm', ['ci', '--prefix', FIXTURE, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: FIXTURE,
    encoding: 'utf8',
  });
  if (npm.status !== 0) throw new Error(`npm ci in ${FIXTURE} failed:\n${npm.stdout}\n${npm.stderr}`);
}

/** The Nest majors a peer range accepts, e.g. `^11.0.0 || ^12.0.0` → [11, 12]. */
function acceptedMajors(range: string): number[] {
  return [...range.matchAll(/\^(\d+)\./g)].map((match) => Number(match[1]));
}

describe('@sundial/client in a Nest 11 application', () => {
  let report: FixtureReport;
  let redis: RedisServer;

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    installFixture();
    const installed = join(FIXTURE, 'node_modules', '@sundial');
    rmSync(installed, { recursive: true, force: true });
    for (const lib of readdirSync(join(DIST, 'libs'))) {
      cpSync(join(DIST, 'libs', lib, 'src'), join(installed, lib), { recursive: true });
    }
    const run = spawnSync(process.execPath, [join(FIXTURE, 'app.js')], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, REDIS_URL: redis.url },
    });
    if (run.status !== 0) throw new Error(`the Nest 11 fixture failed (${run.status}):\n${run.stderr}`);
    report = JSON.parse(run.stdout.trim().split('\n').pop()!) as FixtureReport;
  }, SETUP_DEADLINE_MS);

  afterAll(async () => {
    await redis?.stop();
  });

  it('runs on Nest 11, and the client module loads that same Nest 11', () => {
    const ownModules = join(FIXTURE, 'node_modules') + sep;
    expect(report.app.version).toMatch(/^11\./);
    expect(report.app.path.startsWith(ownModules)).toBe(true);
    expect(report.client.version).toBe(
      JSON.parse(readFileSync(join(ownModules, '@nestjs', 'common', 'package.json'), 'utf8')).version,
    );
    expect(report.client.path.startsWith(ownModules)).toBe(true);
  });

  it('forRoot with the memory backend injects Timers that schedule and run a timer', () => {
    expect(report.runsAfter2d).toBe(0);
    expect(report.runs).toEqual([
      { key: 'invoice:42', due: Date.parse('2026-03-04T00:00:00Z'), payload: { n: 42 } },
    ]);
  });

  it('SundialWorkerModule runs an @OnTimer method of the app over @nestjs/bullmq 11 on Redis', () => {
    const ownModules = join(FIXTURE, 'node_modules') + sep;
    expect(report.bullmq.version).toMatch(/^11\./);
    expect(report.bullmq.path.startsWith(ownModules)).toBe(true);
    expect(report.redis.run).toEqual({ key: 'invoice:7', version: 1, payload: { n: 7 }, signal: true });
    expect(report.redis).toMatchObject({ status: 'completed', last: 'ok' });
  });

  it("SundialTestingModule runs the app's timer on its VirtualClock, without @nestjs/testing", () => {
    expect(report.testing.runsAfter13d).toBe(0);
    expect(report.testing.runs).toEqual([
      { key: 'trial:acme', due: Date.parse('2026-03-15T00:00:00Z'), payload: 'acme' },
    ]);
  });

  it("Sundial's line reaches the Nest 11 app's own logger, with its fields", () => {
    expect(report.testing.lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: expect.stringMatching(/^ifExists keep/),
        key: 'trial:acme',
        requested: 'delay 86400000 ms',
      }),
    ]);
  });

  it('requiring @sundial/testing loads no package beyond what @sundial/client already needs', () => {
    // its index is SundialTestingModule alone (the monorepo's harness is @sundial/testing/harness)
    expect(report.testing.loaded).toEqual(['@sundial/testing']);
  });

  it('closing the application disposes the timers', () => {
    expect(report.disposed).toBe('disposed');
  });

  it.each([
    ['client', ['@nestjs/common', '@nestjs/core']],
    ['testing', ['@nestjs/common']],
  ])("libs/%s's peerDependencies accept Nest 11 (this fixture) and Nest 12 (the apps)", (lib, names) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'libs', lib, 'package.json'), 'utf8'));
    const apps = JSON.parse(
      readFileSync(join(ROOT, 'node_modules', '@nestjs', 'core', 'package.json'), 'utf8'),
    );
    for (const name of names) {
      const majors = acceptedMajors(manifest.peerDependencies[name]);
      expect(majors).toContain(Number(report.app.version.split('.')[0]));
      expect(majors).toContain(Number(apps.version.split('.')[0]));
    }
  });

  it('libs/testing names the libs it needs beside it as peers, at their version', () => {
    const testing = JSON.parse(readFileSync(join(ROOT, 'libs', 'testing', 'package.json'), 'utf8'));
    for (const lib of ['core', 'client']) {
      const { version } = JSON.parse(readFileSync(join(ROOT, 'libs', lib, 'package.json'), 'utf8'));
      expect(testing.peerDependencies[`@sundial/${lib}`]).toBe(`^${version}`);
    }
  });
});
