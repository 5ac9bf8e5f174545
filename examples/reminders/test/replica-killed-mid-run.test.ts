import { spawnApp, waitFor } from '@sundial/testing/harness';
import { useAppsOnPrivateRedis } from '../../../test/cluster/app-fixture';
import type { Notification } from '../src/outbox';
import { sentOf } from './sent';

/**
 * examples/reminders, 3 replicas, a digest every second whose handler works 600 ms: the replica running a
 * slot is SIGKILLed mid-run. With a 1.5 s lease the slot runs again elsewhere (at-least-once), and
 * `catchup: 'all'` runs, in order, the slots that came while the dead run's lease ran out.
 */
describe('examples/reminders: a replica killed mid-run', () => {
  const { redis, apps: replicas, raw: outbox } = useAppsOnPrivateRedis();
  const sent = (kind: Notification['kind']) => sentOf(outbox(), kind);

  // after the fixture's beforeAll (Redis up, build checked): hooks run in the order they are declared
  beforeAll(async () => {
    const spawned = [0, 1, 2].map((n) =>
      spawnApp('examples/reminders', `k${n}`, {
        REDIS_URL: redis().url,
        REPLICA_NAME: `k${n}`,
        DIGEST_CRON: '* * * * * *',
        DIGEST_WORK_MS: '600',
        DIGEST_CATCHUP: 'all',
        // A slot that comes during a (late, catching-up) run is run right after it, not skipped.
        DIGEST_OVERLAP: 'buffer-one',
        SUNDIAL_LEASE_MS: '1500',
        HEARTBEAT_EVERY: '1h',
      }),
    );
    replicas.push(...(await Promise.all(spawned)));
  }, 180_000);

  it('loses no slot: the killed run is completed by another replica, every slot runs to completion once', async () => {
    // A run under way: started, not yet completed.
    const running = await waitFor(
      async () => {
        const [started, done] = await Promise.all([sent('digest.started'), sent('digest')]);
        if (done.length < 2) return undefined;
        return started.find((run) => !done.some((digest) => digest.due === run.due));
      },
      { what: 'a digest run under way', timeoutMs: 20_000 },
    );
    const victim = replicas.find((replica) => replica.name === running.replica)!;
    victim.kill('SIGKILL');
    await victim.exited;
    replicas.splice(replicas.indexOf(victim), 1);
    // It died before sending its digest (else the test saw a finished run, and proves nothing).
    expect((await sent('digest')).some((digest) => digest.due === running.due)).toBe(false);

    const digests = await waitFor(
      async () => {
        const done = await sent('digest');
        return done.filter((digest) => digest.due > running.due).length >= 8 ? done : undefined;
      },
      { what: 'eight slots after the killed one', timeoutMs: 30_000 },
    );
    const dues = digests.map((digest) => digest.due).sort((a, b) => a - b);
    // Every slot from the first to the last ran to completion exactly once: none twice, none skipped.
    expect(new Set(dues).size).toBe(dues.length);
    expect(dues.at(-1)! - dues[0]).toBe((dues.length - 1) * 1000);
    const killed = digests.filter((digest) => digest.due === running.due);
    expect(killed).toHaveLength(1);
    expect(killed[0].replica).not.toBe(victim.name);
    // The killed slot started twice at most (at-least-once); every other slot once.
    const started = (await sent('digest.started')).filter((run) => run.due <= dues.at(-1)!);
    const starts = new Map<number, number>();
    for (const run of started) starts.set(run.due, (starts.get(run.due) ?? 0) + 1);
    expect(starts.get(running.due)).toBe(2);
    for (const [due, count] of starts) if (due !== running.due) expect(count).toBe(1);
    // Nothing ran on the dead replica after it died.
    expect(digests.filter((digest) => digest.due > running.due).map((d) => d.replica)).not.toContain(
      victim.name,
    );
  }, 90_000);
});
