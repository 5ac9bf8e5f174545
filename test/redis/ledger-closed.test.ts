import { type LedgerEntry, silentLogger } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import { type FireCluster, useFirePath } from './fire-fixture';

const fire = useFirePath();

/** Oldest first, as `[event, reason?]`: the order things happened in. */
const story = (entries: LedgerEntry[]) =>
  [...entries].reverse().map(({ event, reason }) => (reason ? [event, reason] : [event]));

const LIFE = [['scheduled'], ['armed'], ['claimed'], ['completed']];
const KEEP_MS = 604_800_000;

/** A one-shot due now, fired through the fire path's scripts: hand-off, claim, completion (removed). */
async function fireOnce(cluster: FireCluster, timer: { id: string; key: string }) {
  const { key } = timer;
  const partition = cluster.partitionOf(key);
  const job = (await cluster.commands.takeDue(partition, 100, 1_000)).job!;
  expect(job.timers.map((ref) => ref.key)).toEqual([key]);
  const [claim] = await cluster.commands.claim(partition, 30_000, 'w-1', job.timers);
  expect(claim.kind).toBe('claimed');
  const run = { id: timer.id, key, version: 1, runCount: 1, missed: 0, overlap: 0 };
  const done = { ...run, mode: 'held', outcome: 'ok' } as const;
  expect(await cluster.commands.complete(partition, [done])).toEqual([
    expect.objectContaining({ kind: 'done' }),
  ]);
  return done;
}

/** One life of a one-shot: scheduled due now, fired, removed. */
async function runOnce(cluster: FireCluster, key: string) {
  return fireOnce(cluster, await cluster.timers.schedule({ key, handler: 'h', delay: 0 }));
}

describe('the closed ledger of a one-shot removed on completion (docs/design.md "Ledger")', () => {
  it('a key that completes twice within the keep while its closed ledger stands keeps both lives, in order', async () => {
    const cluster = await fire.cluster();
    const closed = cluster.timers.keys.closedLedger('twice');
    await runOnce(cluster, 'twice');
    // As the release before schedules it again: it sees no list, so nothing folds the closed ledger in.
    await fire.raw.rename(closed, `${closed}:aside`);
    const again = await cluster.timers.schedule({ key: 'twice', handler: 'h', delay: 0 });
    await fire.raw.rename(`${closed}:aside`, closed);
    await fireOnce(cluster, again);
    expect(story(await cluster.timers.history('twice'))).toEqual([...LIFE, ...LIFE]);
    expect((await fire.raw.get(closed))?.split('\n')).toHaveLength(8);
    expect(await fire.raw.exists(cluster.timers.keys.ledger('twice'))).toBe(0);
    expect(await fire.raw.pttl(closed)).toBeGreaterThan(KEEP_MS - 60_000);
  });

  it('scheduled again, the key goes on in one list: the closed ledger under its new scheduled entry', async () => {
    const cluster = await fire.cluster();
    await runOnce(cluster, 'again');
    await cluster.timers.schedule({ key: 'again', handler: 'h', delay: '1h' });
    expect(story(await cluster.timers.history('again'))).toEqual([...LIFE, ['scheduled']]);
    expect(await fire.raw.exists(cluster.timers.keys.closedLedger('again'))).toBe(0);
    // the ledger lives with the row again (no TTL), and the row's hand-off adds no second 'scheduled'
    expect(await fire.raw.pttl(cluster.timers.keys.ledger('again'))).toBe(-1);
    expect(await fire.raw.hget(cluster.timers.keys.row('again'), 'lo')).toBe('1');
  });

  it('a stale completion of the removed key goes into its closed ledger, which keeps its TTL', async () => {
    const cluster = await fire.cluster();
    const done = await runOnce(cluster, 'late');
    const closed = cluster.timers.keys.closedLedger('late');
    await fire.raw.pexpire(closed, 60_000);
    const partition = cluster.partitionOf('late');
    const [reply] = await cluster.commands.complete(partition, [done]);
    expect(reply).toMatchObject({ kind: 'stale', reason: 'gone' });
    expect(story(await cluster.timers.history('late'))).toEqual([...LIFE, ['stale', 'gone']]);
    expect(await fire.raw.exists(cluster.timers.keys.ledger('late'))).toBe(0);
    expect(await fire.raw.pttl(closed)).toBeLessThanOrEqual(60_000);
  });

  it('a list the release before wrote is read, before the closed ledger it is newer than', async () => {
    const cluster = await fire.cluster();
    const at = await cluster.redisNow();
    const entry = (e: string, a: number) => JSON.stringify({ a, e, v: 1 });
    // the release before removed a one-shot: LPUSH of its life and PEXPIRE, no closed ledger
    const list = cluster.timers.keys.ledger('old');
    await fire.raw.lpush(
      list,
      entry('scheduled', at),
      entry('armed', at),
      entry('claimed', at),
      entry('completed', at),
    );
    await fire.raw.pexpire(list, KEEP_MS);
    expect(story(await cluster.timers.history('old'))).toEqual(LIFE);
    // an earlier life closed by this release, a later one written as a list by the release before
    await runOnce(cluster, 'mixed');
    await fire.raw.lpush(
      cluster.timers.keys.ledger('mixed'),
      entry('scheduled', at + 1),
      entry('armed', at + 1),
      entry('claimed', at + 1),
      entry('completed', at + 2),
    );
    const history = await cluster.timers.history('mixed');
    expect(story(history)).toEqual([...LIFE, ...LIFE]);
    expect(history[0].at).toBe(new Date(at + 2).toISOString());
    expect(await cluster.timers.history('mixed', { limit: 5 })).toEqual(history.slice(0, 5));
  });

  it('history holds at most `ledger` entries of the list and the closed ledger together', async () => {
    const cluster = await fire.cluster();
    await runOnce(cluster, 'small');
    const small = new RedisTimers({
      connection: fire.url(),
      prefix: cluster.prefix,
      ledger: 3,
      logger: silentLogger,
    });
    try {
      expect(story(await small.history('small'))).toEqual(LIFE.slice(1));
    } finally {
      await small.dispose();
    }
  });
});
