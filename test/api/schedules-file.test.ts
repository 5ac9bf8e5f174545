import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Timer } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import {
  type AppProcess,
  ensureBuilt,
  killAll,
  type RedisServer,
  spawnApp,
  startRedis,
  waitFor,
} from '@sundial/testing';
import { SchedulesFollower } from '../../apps/scheduler/src/schedules/schedules-follower';

/** docs/spec.md §5.1, §5.4: "within a second of the edit, without a restart". */
const FOLLOW_DEADLINE_MS = 1000;

const row = (fields: Record<string, string>) =>
  `  - { ${Object.entries(fields)
    .map(([name, value]) => `${name}: ${JSON.stringify(value)}`)
    .join(', ')} }`;
const file = (...rows: string[]) => `timers:\n${rows.join('\n')}\n`;

const REPORT = { key: 'reports:daily', handler: 'log', cron: '0 6 * * *', tz: 'UTC' };
const PING = { key: 'ping', handler: 'log', every: '1h' };
const DIGEST = { key: 'digest', handler: 'log', cron: '0 8 * * MON', tz: 'Europe/Paris' };
const INVALID = { key: 'broken', handler: 'log', every: 'soon' };

describe('the scheduler follows SUNDIAL_SCHEDULES_FILE', () => {
  let redis: RedisServer;
  let dir: string;
  let timers: RedisTimers;
  let scheduler: AppProcess;
  const path = () => join(dir, 'schedules.yaml');
  const keys = async () => (await timers.list()).items.map((timer) => timer.key).sort();
  /** Writes the file and resolves once Redis shows what `done` waits for, within the deadline. */
  const edit = async <T>(text: string, done: () => Promise<T | undefined | false>, what: string) => {
    writeFileSync(path(), text);
    return waitFor(done, { timeoutMs: FOLLOW_DEADLINE_MS, intervalMs: 10, what });
  };
  const reportsOf = (key: string) =>
    scheduler.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => record.key === key && record.level === 'warn');

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    dir = mkdtempSync(join(tmpdir(), 'sundial-schedules-'));
    timers = new RedisTimers({ connection: redis.url });
    // Created through the API before the scheduler starts: a row of the file may not take it over.
    await timers.schedule({ key: 'api:report', handler: 'log', cron: '0 6 * * *', tz: 'UTC' });
    writeFileSync(path(), file(row(REPORT), row(PING)));
    scheduler = await spawnApp('scheduler', 'scheduler', {
      REDIS_URL: redis.url,
      SUNDIAL_SCHEDULES_FILE: path(),
    });
  }, 180_000);

  afterAll(async () => {
    await killAll(scheduler ? [scheduler] : []);
    await timers?.dispose();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies the file at start, marking its rows; the API timer is not touched', async () => {
    expect(await keys()).toEqual(['api:report', 'ping', 'reports:daily']);
    expect(await timers.get('reports:daily')).toMatchObject({
      kind: 'cron',
      cron: '0 6 * * *',
      meta: { sundialOwner: 'schedules-file' },
    });
    expect((await timers.get('api:report'))?.meta).toBeUndefined();
  });

  it('follows edits while it runs: add, change, remove, and one invalid row reported once and not applied', async () => {
    const before = (await timers.get('reports:daily')) as Timer;
    await edit(
      file(row({ ...REPORT, cron: '30 7 * * *' }), row(DIGEST), row(INVALID)),
      async () => (await keys()).join() === 'api:report,digest,reports:daily' && (await timers.get('digest')),
      'the edit in Redis: digest added, ping removed',
    );
    const changed = await timers.get('reports:daily');
    expect(changed).toMatchObject({ cron: '30 7 * * *', meta: { sundialOwner: 'schedules-file' } });
    expect(changed?.id).not.toBe(before.id);
    expect(await timers.get('digest')).toMatchObject({ cron: '0 8 * * MON', tz: 'Europe/Paris' });
    expect(await timers.get('ping')).toBeNull();
    expect(await timers.get('broken')).toBeNull();
    const reported = await waitFor(() => reportsOf('broken').length > 0 && reportsOf('broken'), {
      what: 'the invalid row reported',
    });
    expect(reported).toEqual([
      expect.objectContaining({
        reason: 'invalid',
        field: 'every',
        row: 3,
        fix: expect.any(String),
        file: path(),
      }),
    ]);

    // The next edit is applied too; the invalid row, still there, is not reported again, and a row
    // naming the API timer's key is refused without touching it.
    const api = await timers.get('api:report');
    await edit(
      file(
        row({ ...REPORT, cron: '30 7 * * *' }),
        row(DIGEST),
        row(INVALID),
        row(PING),
        row({ ...REPORT, key: 'api:report', cron: '0 0 * * *' }),
      ),
      async () => (await timers.get('ping')) ?? undefined,
      'ping added back',
    );
    await waitFor(() => reportsOf('api:report').length > 0, { what: 'the API key refused' });
    expect(reportsOf('api:report')).toEqual([
      expect.objectContaining({ reason: 'duplicate-key', field: 'key', fix: expect.any(String) }),
    ]);
    expect(await timers.get('api:report')).toEqual(api);
    expect(reportsOf('broken')).toHaveLength(1);
  });

  it('schedules its rows again after a global cancelAll (reset)', async () => {
    const rows = await keys();
    expect(await timers.cancelAll()).toBe(rows.length);
    await waitFor(async () => (await keys()).join() === rows.join(), {
      timeoutMs: FOLLOW_DEADLINE_MS,
      intervalMs: 10,
      what: 'the rows back after reset',
    });
    // The API timer is gone with the reset, so the file's row under its key now applies.
    expect(await timers.get('api:report')).toMatchObject({
      cron: '0 0 * * *',
      meta: { sundialOwner: 'schedules-file' },
    });
  });
});

/** A Kubernetes ConfigMap volume: `schedules.yaml` → `..data/schedules.yaml`, `..data` swapped atomically. */
describe('SchedulesFollower on a ConfigMap volume', () => {
  let redis: RedisServer;
  let dir: string;
  let timers: RedisTimers;
  let follower: SchedulesFollower;
  let version = 0;
  const swap = (text: string) => {
    const next = join(dir, `..v${++version}`);
    mkdirSync(next);
    writeFileSync(join(next, 'schedules.yaml'), text);
    symlinkSync(next, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  };

  beforeAll(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'sundial-configmap-'));
    swap(file(row(PING)));
    symlinkSync(join('..data', 'schedules.yaml'), join(dir, 'schedules.yaml'));
    timers = new RedisTimers({ connection: redis.url });
    follower = new SchedulesFollower({
      path: join(dir, 'schedules.yaml'),
      timers,
      limits: {},
      logger: silentLogger,
    });
    await follower.start();
  });

  afterAll(async () => {
    await follower?.stop();
    await timers?.dispose();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('follows a swap of the ..data symlink within a second', async () => {
    expect((await timers.list()).items.map((timer) => timer.key)).toEqual(['ping']);
    swap(file(row(DIGEST)));
    await waitFor(async () => (await timers.list()).items.map((timer) => timer.key).join() === 'digest', {
      timeoutMs: FOLLOW_DEADLINE_MS,
      intervalMs: 10,
      what: 'the swapped file in Redis',
    });
  });
});
