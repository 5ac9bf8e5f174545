import { Redis } from 'ioredis';
import { readRuns, waitFor } from '@sundial/testing/harness';
import { type SentinelApps, startSentinelApps } from './sentinel-fixture';

const TIMERS = 300;
/**
 * A run whose claim or completion the old primary took after the promotion is left to its lease (its
 * fire job stays active on the new primary until BullMQ's lock, twice the lease, expires): short here.
 */
const LEASE_MS = 3000;
/** How long after the switch was seen a run may still have been taken on the old primary. */
const MOVE_MS = 1_000;
/**
 * How late a run may start (ms after its due): the reconciler's bound (§4.3: hand-off, grace 2 s, its
 * 300 ms period here) or a lease's expiry (3 s) plus the switch's second; not BullMQ's lock (2 × lease).
 */
const LATE_MS = 5_000;

/**
 * A failover that finds the old primary alive (`SENTINEL FAILOVER`, as for maintenance, or a healed
 * network split): Sentinel promotes the replica and announces it (`+switch-master`), but demotes the
 * old primary only when it next looks at it, ~10 s later. Whatever a process wrote to the old primary
 * meanwhile was acknowledged and then dropped with its data. The processes must leave it at the
 * announcement: a run taken after it is not run again. Before the fix every run of those ~10 s ran
 * twice (hundreds here), as the rows on the new primary never saw their claims.
 */
describe('cluster: Sentinel failover with the old primary alive', () => {
  let started: SentinelApps;
  let sentinel: Redis;

  beforeAll(async () => {
    started = await startSentinelApps(1, LEASE_MS);
    sentinel = new Redis(started.redis.sentinels[0].url);
  }, 180_000);

  afterAll(async () => {
    sentinel?.disconnect();
    await started?.stop();
  });

  it('leaves the old primary at the switch: no run taken after it runs again', async () => {
    const { redis, apps, recordsClient } = started;
    const [scheduler] = apps;
    for (let n = 0; n < TIMERS; n += 50) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, k) =>
          scheduler.api('POST', '/v1/timers', {
            key: `s:${n + k}`,
            handler: 'record',
            delay: 1_000 + Math.floor(((n + k) / TIMERS) * 10_000), // spread over 10 s of runs
          }),
        ),
      );
      expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 201));
    }
    await waitFor(async () => (await recordsClient.llen('runs')) >= TIMERS / 10, {
      timeoutMs: 10_000, // deadline: the first runs are due a second after they were scheduled
      what: 'the first runs',
    });

    expect(await sentinel.call('SENTINEL', 'FAILOVER', redis.name)).toBe('OK');
    await waitFor(async () => (await redis.primaryPort()) === redis.replica.port, {
      timeoutMs: 20_000, // deadline: the promotion takes about a second
      intervalMs: 50,
      what: 'the Sentinels to announce the replica as the primary',
    });
    const switchedAt = Date.now();

    // Sentinel demotes the old primary ~10 s after the switch; what was written there is gone then, and
    // a timer whose run was taken there is due again on the new primary. Once every row has ended on
    // the new primary after that, no run can come again.
    const oldPrimary = new Redis(redis.primary.url);
    await waitFor(async () => /role:slave/.test(await oldPrimary.info('replication')), {
      timeoutMs: 30_000, // deadline: Sentinel looks at the old primary every 10 s
      what: 'Sentinel to demote the old primary',
    }).finally(() => oldPrimary.disconnect());
    await waitFor(
      async () => {
        const { body } = await scheduler.api<{ items: unknown[] }>('GET', '/v1/timers?prefix=s:&limit=1');
        return body.items.length === 0;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: `all ${TIMERS} timers to end` }, // deadline
    );
    const runs = await readRuns(recordsClient);
    expect(new Set(runs.map((run) => run.id)).size).toBe(TIMERS);
    const byId = new Map<string, typeof runs>();
    for (const run of runs) byId.set(run.id, [...(byId.get(run.id) ?? []), run]);
    const again = [...byId.values()].filter((own) => own.length > 1 && own[0].at > switchedAt + MOVE_MS);
    expect(again.map(([first]) => ({ key: first.key, ranAfterSwitchMs: first.at - switchedAt }))).toEqual([]);
    expect(runs.filter((run) => run.at < run.due)).toEqual([]);

    // A fire job the old primary finished after the promotion stays `active` on the new one with its
    // worker's lock, which nobody renews: the worker finishes it again when it reconnects, and the
    // reconciler re-arms its timers at once (~3 s late here), instead of BullMQ's stalled check once
    // that lock expired (twice the lease, then up to a lease more: 6-9 s late). Lost claims' and
    // completions' leases expire 3 s after their claims.
    const late = runs.filter((run) => run.at - run.due > LATE_MS);
    expect(late.map((run) => ({ key: run.key, lateMs: run.at - run.due }))).toEqual([]);
    const finishedAgain = apps.flatMap((app) => app.lines).filter((line) => line.includes('finished again'));
    console.log(
      `Sentinel switch: ${runs.length - TIMERS} runs again, latest ${Math.max(...runs.map((run) => run.at - run.due))} ms after its due; ${finishedAgain.join(' | ') || 'no fire job finished again'}`,
    );
  }, 180_000);
});
