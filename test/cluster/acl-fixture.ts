import type { Timer } from '@sundial/core';
import { type AppProcess, keyPath, readRuns, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';

/**
 * Runs every kind of timer through the first app's API (one-shots both deliveries, intervals both
 * awaitTask ways, a cron) and every client operation (reschedule, pause, resume, trigger, cancel,
 * cancel-all, the reads), checks each ran as often as it should (`recordsUrl`: the Redis the `record`
 * and `slow` handlers write their runs to), and that every app is still ready: no refused command broke
 * a loop.
 */
export async function runEveryKindOfTimer(apps: AppProcess[], recordsUrl: string): Promise<void> {
  const records = new Redis(recordsUrl);
  try {
    await runAndCheck(apps, records);
  } finally {
    records.disconnect();
  }
}

async function runAndCheck(apps: AppProcess[], records: Redis): Promise<void> {
  const api = apps[0].api;
  const post = async (spec: object): Promise<Timer> => {
    const reply = await api<Timer>('POST', '/v1/timers', { removeOnComplete: false, ...spec });
    expect(reply.status).toBe(201);
    return reply.body;
  };
  const timers = [
    await post({ key: 'acl:once', handler: 'record', delay: 200 }),
    await post({
      key: 'acl:once-amo',
      handler: 'slow',
      payload: { ms: 100 },
      delay: 200,
      delivery: 'at-most-once',
    }),
    await post({ key: 'acl:every', handler: 'slow', payload: { ms: 50 }, every: 300, maxRuns: 2 }),
    await post({ key: 'acl:free', handler: 'record', every: 300, maxRuns: 3, awaitTask: false }),
    await post({ key: 'acl:cron', handler: 'record', cron: '* * * * * *', tz: 'UTC', maxRuns: 2 }),
  ];
  // the other scripts: reschedule, pause, resume, trigger, cancel, cancel-all, and the reads
  await post({ key: 'acl:ops', handler: 'record', every: 60_000 });
  expect((await api('POST', `${keyPath('acl:ops')}/reschedule`, { delay: 60_000 })).status).toBe(200);
  expect((await api('POST', `${keyPath('acl:ops')}/pause`)).status).toBe(200);
  expect((await api('POST', `${keyPath('acl:ops')}/resume`)).status).toBe(200);
  expect((await api('POST', `${keyPath('acl:ops')}/trigger`)).status).toBe(200);
  await post({ key: 'acl:gone', handler: 'record', delay: 60_000 });
  expect((await api<{ cancelled: boolean }>('DELETE', keyPath('acl:gone'))).body).toEqual({
    cancelled: true,
  });
  expect((await api('GET', '/v1/timers?prefix=acl:')).status).toBe(200);

  // deadline: every timer's last run recorded
  await waitFor(
    async () => {
      const rows = await Promise.all(timers.map(async (t) => (await api<Timer>('GET', keyPath(t.key))).body));
      return rows.every((row) => row.status === 'completed');
    },
    { timeoutMs: 20_000, intervalMs: 100, what: 'every timer to complete' },
  );
  const runs = await readRuns(records);
  const started = (key: string) => runs.filter((run) => run.key === key && run.event === 'started').length;
  expect(timers.map((t) => [t.key, started(t.key)])).toEqual([
    ['acl:once', 1],
    ['acl:once-amo', 1],
    ['acl:every', 2],
    ['acl:free', 3],
    ['acl:cron', 2],
  ]);
  // the triggered run of acl:ops
  await waitFor(async () => (await readRuns(records)).some((run) => run.key === 'acl:ops'), {
    what: 'the triggered run',
  });
  await post({ key: 'acl:idle', handler: 'record', delay: 3_600_000 });
  expect((await api('DELETE', '/v1/timers?prefix=acl:')).status).toBe(200);
  // a cancel-all's entry of a key with no ledger list: read from its tombstone and the call's record
  const history = await api<{ entries: { event: string }[] }>('GET', `${keyPath('acl:idle')}/history`);
  expect(history.body.entries.map((entry) => entry.event)).toEqual(['cancelled', 'scheduled']);
  for (const app of apps) expect((await app.api('GET', '/health/ready')).status).toBe(200);
}

/** A command Redis refused a user, from its `ACL LOG`. */
export interface Refusal {
  server: string;
  context: unknown;
  object: unknown;
  username: unknown;
}

/**
 * What each server's `ACL LOG` lists (`servers`: name and an admin connection), but the one refusal the
 * documented user is meant to meet: the scheduler's `maxmemory-policy` check at start, skipped
 * without CONFIG (docs/operations.md). Empty when the user was granted every command it sent.
 */
export async function refusals(servers: [string, Redis][]): Promise<Refusal[]> {
  const logs = await Promise.all(
    servers.map(async ([server, admin]) =>
      ((await admin.call('ACL', 'LOG')) as unknown[][]).map((entry) => {
        const field = (name: string) => entry[entry.indexOf(name) + 1];
        return { server, context: field('context'), object: field('object'), username: field('username') };
      }),
    ),
  );
  return logs.flat().filter((refusal) => refusal.object !== 'config|get');
}
