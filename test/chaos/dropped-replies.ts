import type { Timer, TimersApi } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import type { ScriptName } from '../../libs/redis/src/store/script-loader';
import { scriptMatcher, withDeadline } from './fault-tools';
import { type Scenario, sleep } from './scenario';

/** The scripts the load makes the cluster run (release runs when a worker shuts down: see below). */
const LOADED_SCRIPTS: ScriptName[] = [
  'schedule',
  'cancel',
  'take-due',
  'claim',
  'complete',
  'renew-leases',
  'reconcile',
];

/**
 * The state-changing scripts only an operator's call runs: the scenario calls each itself, through the
 * proxy, on timers of its own (keys `ops:*`, outside the load's ledger). `check` reads what Redis holds
 * after the call and says what is wrong with the answer, if anything: a script that ran twice answers
 * a refusal (pause of a paused timer) or something other than the row holds (one version bump too many).
 */
interface Operation {
  script: ScriptName;
  /** what the timers hold before the call (not through a dropped reply) */
  prepare(client: TimersApi): Promise<unknown>;
  act(client: TimersApi): Promise<Timer | number>;
  check(client: TimersApi, answer: Timer | number): Promise<string | undefined>;
}

const FAR = { handler: 'record', delay: 3_600_000 } as const;

/** The answer is the row as it is now (same id, version, status, due): the script ran once. */
async function answerIsRow(client: TimersApi, answer: Timer | number): Promise<string | undefined> {
  const timer = answer as Timer;
  const row = await client.get(timer.key);
  const fields = (t: Timer | null) => t && { id: t.id, version: t.version, status: t.status, dueAt: t.dueAt };
  const [said, holds] = [JSON.stringify(fields(timer)), JSON.stringify(fields(row))];
  return said === holds ? undefined : `answered ${said}, the row holds ${holds}`;
}

const OPERATIONS: Operation[] = [
  {
    script: 'reschedule',
    prepare: (client) => client.schedule({ key: 'ops:reschedule', ...FAR }),
    act: (client) => client.reschedule('ops:reschedule', { delay: 7_200_000 }),
    async check(client, answer) {
      return (answer as Timer).version === 2
        ? answerIsRow(client, answer)
        : `version ${(answer as Timer).version}`;
    },
  },
  {
    script: 'pause',
    prepare: (client) => client.schedule({ key: 'ops:pause', ...FAR }),
    act: (client) => client.pause('ops:pause'),
    check: answerIsRow,
  },
  {
    script: 'resume',
    prepare: async (client) => {
      await client.schedule({ key: 'ops:resume', ...FAR });
      return client.pause('ops:resume');
    },
    act: (client) => client.resume('ops:resume'),
    check: answerIsRow,
  },
  {
    script: 'trigger',
    // an hourly interval: the trigger's run is its only one; a trigger run twice would make two
    prepare: (client) => client.schedule({ key: 'ops:trigger', handler: 'record', every: 3_600_000 }),
    act: (client) => client.trigger('ops:trigger'),
    async check(client) {
      const ran = await waitFor(
        async () => {
          const row = await client.get('ops:trigger');
          return row !== null && row.runCount > 0 && row.status === 'pending' && row;
        },
        { timeoutMs: 10_000, what: 'the triggered run' },
      ).catch(() => undefined);
      if (!ran) return 'the triggered run did not end';
      await sleep(1_000);
      const row = await client.get('ops:trigger');
      return row?.runCount === 1 ? undefined : `${row?.runCount} runs`;
    },
  },
  {
    script: 'cancel-all',
    prepare: (client) => client.scheduleMany([1, 2, 3].map((n) => ({ key: `ops:all:${n}`, ...FAR }))),
    act: (client) => client.cancelAll('ops:all:'),
    async check(client, answer) {
      const left = (await Promise.all([1, 2, 3].map((n) => client.get(`ops:all:${n}`)))).filter(Boolean);
      return answer === 3 && left.length === 0 ? undefined : `answered ${answer}, ${left.length} left`;
    },
  },
];

/**
 * For each state-changing script in turn, the proxy (in front of every app and the load's client) drops
 * one reply to it: the load's scripts as the cluster runs them; the operators' scripts called here;
 * `release` when a worker is stopped (SIGTERM, its shutdown grace shorter than the long handlers, so it
 * hands its runs back). A wrong answer of an operator's call is noted on the cluster.
 */
export const droppedReplies: Scenario = {
  name: `one reply dropped per script (${[...LOADED_SCRIPTS, ...OPERATIONS.map((op) => op.script), 'release'].join(', ')})`,
  proxy: 'all',
  shutdownGraceMs: 300,
  async inject(cluster) {
    const proxy = cluster.proxy!;
    const dropOnce = async <T>(script: ScriptName, act: () => Promise<T>): Promise<T> => {
      const before = proxy.dropped;
      proxy.dropReplyTo({ matches: scriptMatcher(script) });
      try {
        const [result] = await Promise.all([
          act(),
          withDeadline(4_000, () => (proxy.dropped > before ? true : undefined)),
        ]);
        return result;
      } finally {
        proxy.dropReplyTo(undefined);
      }
    };
    for (const script of LOADED_SCRIPTS) {
      await dropOnce(script, () => Promise.resolve());
      await sleep(300);
    }
    for (const op of OPERATIONS) {
      await op.prepare(cluster.client);
      const before = proxy.dropped;
      const answer = await dropOnce(op.script, () => op.act(cluster.client)).catch((error: Error) => error);
      if (proxy.dropped === before) cluster.noteWrong(`${op.script}: no reply was dropped`);
      const wrong =
        answer instanceof Error ? `refused: ${answer.message}` : await op.check(cluster.client, answer);
      if (wrong) cluster.noteWrong(`${op.script} with its reply dropped: ${wrong}`);
    }
    // release: a worker stopped while it runs long handlers hands them back (at-least-once: they run
    // again; at-most-once: recorded lost), its reply dropped on the way.
    const victim = cluster.workers[0];
    const before = proxy.dropped;
    await dropOnce('release', () => cluster.kill(victim, 'SIGTERM'));
    if (proxy.dropped === before) cluster.noteWrong('release: no reply was dropped');
    await cluster.spawn('worker');
    return proxy.dropped;
  },
};
