/**
 * A client killed in the middle of its scope record's sweep (docs/design.md "The cancelAll scope record"):
 * a real child process with `cancelAllRecords` answers its cancelAll, sweeps one batch, and dies of SIGKILL
 * with its next sweep call held in front of Redis (a CommandGate, so where it dies is not a matter of
 * timing). A Reconciler then finishes the sweep: each covered key cancelled once, with the ledger entry
 * and event a per-key cancel writes, and nothing outside the scope touched.
 */
import { Backlog } from '@sundial/redis';
import { childOutput, CommandGate, DIST, ensureBuilt, spawnOwned, waitFor } from '@sundial/testing/harness';
import { join } from 'node:path';
import { story, useFirePath } from './fire-fixture';
import { scopeRecordCalls } from './scope-record-calls';

const fire = useFirePath();
const { recordsLeft } = scopeRecordCalls(fire);

/** The child's sweep batch: the covered keys span several, so one swept leaves most behind. */
const SWEEP_BATCH = 50;
/** Keys in the scope: 500 pending and one paused (live too, so counted). */
const PENDING = 500;

/** A plain node process from `dist` that cancels `scope` with records on and prints the count it answered. */
function spawnCanceller(url: string, prefix: string, scope: string) {
  const program = `
    require(${JSON.stringify(join(DIST, 'libs', 'server', 'src', 'register-paths'))});
    const { RedisTimers } = require('@sundial/redis');
    const { silentLogger } = require('@sundial/core');
    const timers = new RedisTimers({ connection: ${JSON.stringify(url)}, prefix: ${JSON.stringify(prefix)},
      cancelBatch: ${SWEEP_BATCH}, cancelAllRecords: true, logger: silentLogger });
    timers.cancelAll(${JSON.stringify(scope)}).then((count) => console.log('answered ' + count));`;
  const child = spawnOwned(process.execPath, ['-e', program], { stdio: ['ignore', 'pipe', 'pipe'] });
  return { child, ...childOutput(child) };
}

describe('cancelAll scope records: a client killed mid-sweep', () => {
  beforeAll(() => ensureBuilt(), 180_000); // deadline: a build when dist is older than the sources

  it('the reconciler finishes its sweep: every covered key cancelled once, nothing else touched', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    const scoped = Array.from({ length: PENDING }, (_, i) => `s:${i}`);
    for (let i = 0; i < PENDING; i += 100)
      await timers.scheduleMany(scoped.slice(i, i + 100).map((key) => ({ key, handler: 'h', delay: '1h' })));
    await timers.schedule({ key: 's:paused', handler: 'h', delay: '1h' });
    await timers.pause('s:paused');
    scoped.push('s:paused');
    const others = await Promise.all(
      ['o:1', 'o:2', 'r:1'].map((key) => timers.schedule({ key, handler: 'h', delay: '1h' })),
    );
    // Held at the child's first sweep call: the exact bulk string of its mode, not the script's source.
    const gate = await CommandGate.start({ port: Number(new URL(fire.url()).port) }, /\$5\r\nsweep\r\n/);
    try {
      const canceller = spawnCanceller(gate.url, cluster.prefix, 's:');
      await gate.held;
      await waitFor(() => canceller.stdout.includes(`answered ${scoped.length}`), {
        timeoutMs: 20_000, // deadline: a node process's start on a loaded host
        what: `the child's answer (its output: ${canceller.lines.join(' | ')})`,
      });
      // One batch through, the next held; then the child dies with it unsent.
      gate.release();
      await gate.holdNext();
      canceller.child.kill('SIGKILL');
      expect((await canceller.ended).signal).toBe('SIGKILL');
      gate.cut();
    } finally {
      await gate.stop();
    }
    const scm = `${timers.keys.base(0)}scm`;
    expect(await fire.raw.scard(scm)).toBe(scoped.length - SWEEP_BATCH);
    expect(await recordsLeft(cluster.prefix)).toBe(2); // the record and its set, left by the dead client

    // Meanwhile the gauges count the three live timers only, and the keys left to sweep apart.
    const backlog = new Backlog({ connection: fire.url(), prefix: cluster.prefix });
    try {
      expect(await backlog.pending()).toEqual({ 0: 2 + 1 });
      expect(await backlog.unswept()).toEqual({ 0: scoped.length - SWEEP_BATCH });
    } finally {
      await backlog.close();
    }

    const reconciler = cluster.reconciler({ batchLimit: 100 });
    let passes = 0;
    while ((await recordsLeft(cluster.prefix)) > 0 && passes < 20) {
      await reconciler.reconcileOnce();
      passes++;
    }
    expect(passes).toBe(Math.ceil((scoped.length - SWEEP_BATCH) / 100));
    await reconciler.reconcileOnce(); // a pass more finds nothing to sweep
    const after = new Backlog({ connection: fire.url(), prefix: cluster.prefix });
    try {
      expect(await after.unswept()).toEqual({ 0: 0 });
    } finally {
      await after.close();
    }

    // Every covered key: cancelled once (one event, at the record's time whoever swept it; its
    // tombstone; one ledger entry).
    await waitFor(() => cluster.events.filter(({ type }) => type === 'cancelled').length >= scoped.length, {
      timeoutMs: 5_000, // deadline: the events of the last passes
      what: 'a cancelled event per covered key',
    });
    const cancelled = cluster.events.filter(({ type }) => type === 'cancelled');
    expect(cancelled.map(({ key }) => key).sort()).toEqual([...scoped].sort());
    expect(new Set(cancelled.map(({ at }) => at)).size).toBe(1);
    // version + 1 (a pause made s:paused's 2)
    for (const { key, version } of cancelled) expect(version).toBe(key === 's:paused' ? 3 : 2);
    for (const key of scoped) {
      expect(await fire.raw.exists(timers.keys.row(key))).toBe(0);
      expect(await fire.raw.exists(timers.keys.tombstone(key))).toBe(1);
    }
    for (const key of ['s:0', 's:250'])
      expect(story(await timers.history(key))).toEqual([
        ['scheduled', 1],
        ['cancelled', 2, 'cancelled'],
      ]);
    expect(story(await timers.history('s:paused'))).toEqual([
      ['scheduled', 1],
      ['paused', 2],
      ['cancelled', 3, 'cancelled'],
    ]);
    // Outside the scope: as they were.
    expect((await timers.list()).items).toEqual(others);
    expect(await fire.raw.zcard(timers.keys.due(0))).toBe(others.length);
  });
});
