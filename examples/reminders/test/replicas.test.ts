import { spawnApp, waitFor } from '@sundial/testing/harness';
import { useAppsOnPrivateRedis } from '../../../test/cluster/app-fixture';
import type { Notification } from '../src/outbox';
import { sentOf } from './sent';

/**
 * examples/reminders as deployed: 3 replicas (child processes from dist) on one private Redis, each
 * serving HTTP, running the handlers and dispatching — no Sundial service beside them.
 */
describe('examples/reminders: 3 replicas', () => {
  const { redis, apps: replicas, timers, raw: outbox } = useAppsOnPrivateRedis({ prefix: 'reminders' });
  const env = (extra: Record<string, string> = {}) => ({
    REDIS_URL: redis().url,
    DIGEST_CRON: '* * * * * *',
    HEARTBEAT_EVERY: '1h',
    // every entry of the ~16 slots the first test looks at stays in the ledger it reads
    SUNDIAL_LEDGER: '200',
    // A replica killed mid-run (the first test, on a loaded host) holds its slot's lease this long: 5 s
    // instead of 30 s, so the slot runs again, and the next ones, within the test's wait.
    SUNDIAL_LEASE_MS: '5000',
    ...extra,
  });
  /** Three replicas, in `replicas` (killed after the suite if still up). */
  const boot = async (extra: Record<string, string> = {}) => {
    replicas.push(
      ...(await Promise.all(
        [0, 1, 2].map((n) =>
          spawnApp('examples/reminders', `r${n}`, { ...env(extra), REPLICA_NAME: `r${n}` }),
        ),
      )),
    );
  };
  const sent = (kind: Notification['kind']) => sentOf(outbox(), kind);
  const stopAll = async () => {
    for (const replica of replicas) replica.kill('SIGTERM');
    await Promise.all(replicas.map((replica) => replica.exited));
    replicas.splice(0);
  };

  // after the fixture's beforeAll (Redis up, build checked): hooks run in the order they are declared
  beforeAll(() => boot(), 180_000);

  it('a @DistributedCron every second runs at most once per slot over 10+ slots, a replica killed meanwhile; a slot not run is recorded skipped', async () => {
    const digests = await waitFor(
      async () => ((await sent('digest')).length >= 3 ? sent('digest') : undefined),
      {
        what: 'three digests',
      },
    );
    // Kill a replica that did not run the last slot, right after it ran: between two slots — as a rule.
    // On a loaded host the next slot may have come: the victim may then be mid-run when it dies.
    const victim = replicas.find((replica) => replica.name !== digests.at(-1)!.replica)!;
    victim.kill('SIGKILL');
    await victim.exited;
    replicas.splice(replicas.indexOf(victim), 1);
    const atKill = (await sent('digest')).length;
    const after = await waitFor(
      async () => ((await sent('digest')).length >= atKill + 10 ? sent('digest') : undefined),
      {
        what: 'ten more digests',
        // deadline: ten every-second slots, and a killed run's 5 s lease and the reconciler's 5 s pass
        timeoutMs: 30_000,
      },
    );
    const runs = after.map(({ due, replica }) => ({ due, replica }));
    const dues = [...new Set(runs.map((run) => run.due))].sort((a, b) => a - b);
    const [first, last] = [dues[0], dues.at(-1)!];
    const history = await timers().history('cron:reminders.digest', { limit: 200 });
    const context = JSON.stringify({ runs, history });
    // No slot twice — but the one the victim was running when it died: its digest went out, its
    // completion did not, so once its lease expired the slot ran again elsewhere (at-least-once,
    // docs/spec.md §3.8). A slot run twice otherwise is a defect.
    const victimsLast = Math.max(...runs.filter((run) => run.replica === victim.name).map((run) => run.due));
    const twice = dues.filter((due) => runs.filter((run) => run.due === due).length > 1);
    const allowed = twice.length === 0 || (twice.length === 1 && twice[0] === victimsLast);
    expect({ twice, allowed, context }).toEqual({ twice, allowed: true, context });
    expect(runs.filter((run) => run.due === victimsLast).length).toBeLessThanOrEqual(2);
    // A slot between the first run and the last that did not run was passed over and recorded: with
    // overlap 'skip' and catchup 'once' (the defaults), a run that ends after the next slot came skips
    // it (docs/spec.md §3.3) — on a loaded machine a run can take that long. Each such slot is in the
    // count of a `skipped` entry of the run before it.
    const dueOf = new Map(
      history
        .filter((entry) => entry.event === 'completed')
        .map((entry) => [entry.version, Date.parse(entry.due!)]),
    );
    const skippedBetween = history
      .filter((entry) => entry.event === 'skipped' && (dueOf.get(entry.version) ?? Infinity) < last)
      .reduce((sum, entry) => sum + entry.count!, 0);
    expect({ slots: (last - first) / 1000 + 1, context }).toEqual({
      slots: dues.length + skippedBetween,
      context,
    });
    // Nothing from the victim once it was dead: every digest after the kill came from a live replica.
    expect(runs.slice(atKill).filter((run) => run.replica === victim.name)).toEqual([]);
    const rows = await timers().list({ prefix: 'cron:' });
    expect(rows.items.map((row) => row.key)).toEqual(['cron:reminders.digest']);
  }, 60_000);

  it('an @OnTimer handler runs with its payload, ctx.signal and the injected outbox', async () => {
    const response = await replicas[0].api('POST', '/entities/invoice-42/reminders/r1', {
      text: 'pay',
      delay: 300,
    });
    expect(response.status).toBe(201);
    const [reminder] = await waitFor(
      async () => {
        const reminders = await sent('reminder');
        return reminders.length > 0 ? reminders : undefined;
      },
      { what: 'the reminder' },
    );
    expect(reminder).toMatchObject({
      entity: 'invoice-42',
      text: 'pay',
      due: (response.body as { dueAt: number }).dueAt,
    });
    expect(await sent('reminder')).toHaveLength(1);
  });

  it('redeploys: the row follows the changed cron, then the removed decorator; API timers untouched', async () => {
    await timers().schedule({
      key: 'cron:reminders.digest.manual',
      handler: 'reminders.digest',
      cron: '0 9 * * *',
      tz: 'UTC',
    });
    const before = await timers().get('cron:reminders.digest');
    await stopAll();

    await boot({ DIGEST_CRON: '*/2 * * * * *' });
    expect(await timers().get('cron:reminders.digest')).toMatchObject({
      cron: '*/2 * * * * *',
      handler: 'reminders.digest',
    });
    expect((await timers().get('cron:reminders.digest'))?.id).not.toBe(before?.id);
    await stopAll();

    await boot({ DIGEST_ENABLED: 'false' });
    expect(await timers().get('cron:reminders.digest')).toBeNull();
    expect(await timers().get('cron:reminders.digest.manual')).toMatchObject({ cron: '0 9 * * *' });
    expect(await timers().get('interval:reminders.heartbeat')).toMatchObject({ kind: 'interval' });
  }, 120_000);
});
