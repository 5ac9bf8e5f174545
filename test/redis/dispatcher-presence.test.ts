import { type LogFields, silentLogger, type SundialLogger } from '@sundial/core';
import { Dispatcher, RedisTimers, TimerRunner } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { documentedAcl } from '../documented-acl';
import { recorder, useFirePath } from './fire-fixture';

/** Short for the test; the default is 15 s (DEFAULT_DISPATCHER_GRACE_MS), looks every third of it. */
const GRACE_MS = 600;

interface Line {
  level: 'warn' | 'info';
  message: string;
  fields: LogFields;
  at: number;
}

/** A logger keeping the runner's lines about dispatchers (the others are not this test's). */
function presenceLines(): { logger: SundialLogger; lines: Line[] } {
  const lines: Line[] = [];
  const keep =
    (level: Line['level']) =>
    (message: string, fields: LogFields = {}): void => {
      if (/dispatcher/i.test(message)) lines.push({ level, message, fields, at: Date.now() });
    };
  return { logger: { ...silentLogger, warn: keep('warn'), info: keep('info') }, lines };
}

/**
 * docs/spec.md §4.2: a timer fires only where a dispatcher hands it off, and a prefix with none fails
 * nothing by itself. Each dispatcher writes its member of `P:dispatchers` (the partitions it serves, for
 * 15 s) every few seconds from its passes; each runner looks, and says once when a partition has none
 * past its grace (naming them when dispatchers run for others), and once when every one has again.
 */
describe('runners tell a prefix with no dispatcher', () => {
  // The cases run side by side, each on a prefix of its own (the ACL case on 'sundial', the only one
  // there): three of them wait on fixed periods, the dispatchers' 3 s announcements or a runner's 6 s
  // quiet window after an announcement went missing (two periods).
  const fire = useFirePath();

  /** A dispatcher, then a runner of the handler `job` (`ran`) whose lines about dispatchers are kept. */
  const dispatcherAndRunner = async () => {
    const cluster = await fire.cluster();
    const { logger, lines } = presenceLines();
    const ran = recorder();
    const dispatcher = await cluster.dispatcher();
    await cluster.runner({ job: ran.handler }, { logger, dispatcherGraceMs: GRACE_MS });
    return { cluster, lines, ran, dispatcher };
  };

  it.concurrent(
    'a runner alone warns once past its grace, naming the prefix and the fix; a dispatcher started later: one info line',
    async () => {
      const cluster = await fire.cluster();
      const { logger, lines } = presenceLines();
      const startedAt = Date.now();
      await cluster.runner({}, { logger, dispatcherGraceMs: GRACE_MS });
      const [warn] = await waitFor(() => lines.length > 0 && lines, { what: 'the warn line' });
      expect(warn.level).toBe('warn');
      expect(warn.at - startedAt).toBeGreaterThanOrEqual(GRACE_MS);
      expect(warn.message).toContain(`prefix '${cluster.prefix}'`);
      expect(warn.fields).toMatchObject({
        prefix: cluster.prefix,
        fix: expect.stringMatching(/Construct and start a Dispatcher .*or deploy the scheduler/),
      });

      await cluster.dispatcher();
      await waitFor(() => lines.length > 1, { what: 'the info line' });
      expect(lines.map((line) => line.level)).toEqual(['warn', 'info']);
      expect(lines[1].message).toContain(`A Sundial dispatcher runs again for prefix '${cluster.prefix}'`);
    },
  );

  it.concurrent(
    'dispatchers serving overlapping subsets (0-3, 2-5 of 8): one warn naming 6,7 and the serve fix; a third for 6,7: the info line; it gone: the warn again',
    async () => {
      const cluster = await fire.cluster({ partitions: 8 });
      const { logger, lines } = presenceLines();
      await cluster.dispatcher({ serve: [0, 1, 2, 3] });
      await cluster.dispatcher({ serve: [2, 3, 4, 5] });
      // A runner of partition 0 alone: it names every partition of the prefix with no dispatcher.
      await cluster.runner({}, { logger, dispatcherGraceMs: GRACE_MS, serve: [0] });
      const [warn] = await waitFor(() => lines.length > 0 && lines, { what: 'the warn line' });
      expect(warn.level).toBe('warn');
      expect(warn.message).toBe(
        `No Sundial dispatcher serves partitions 6,7 (of 8) of prefix '${cluster.prefix}': their due timers stay pending and reach no worker until one does`,
      );
      expect(warn.fields).toMatchObject({
        prefix: cluster.prefix,
        partitions: [6, 7],
        fix: `Have a Dispatcher for prefix '${cluster.prefix}' serve partitions 6,7: its serve option names them (left out, it serves every partition; docs/spec.md §5.5), or a scheduler (apps/scheduler) with SUNDIAL_PREFIX=${cluster.prefix} whose SUNDIAL_SERVE_PARTITIONS names them (unset, it serves every partition).`,
      });

      const third = await cluster.dispatcher({ serve: [6, 7] });
      await waitFor(() => lines.length > 1, { what: 'the info line' });
      expect(lines[1]).toMatchObject({
        level: 'info',
        message: `A Sundial dispatcher runs again for prefix '${cluster.prefix}', every partition served: due timers reach the workers`,
      });

      // Its announcement gone (this ZREM, before its end: like a restore, said after the 6 s quiet window).
      await third.close();
      const members = await fire.raw.zrange(`${cluster.prefix}:dispatchers`, '0', '-1');
      await fire.raw.zrem(`${cluster.prefix}:dispatchers`, ...members.filter((m) => m.endsWith('|8|6,7')));
      await waitFor(() => lines.length > 2, { what: 'the second warn line', timeoutMs: 10_000 }); // deadline
      expect(lines.map((line) => line.level)).toEqual(['warn', 'info', 'warn']);
      expect(lines[2].fields.partitions).toEqual([6, 7]);
    },
  );

  it.concurrent(
    "subsets in a Nest deployment (consumers 'external'): the partitions, SUNDIAL_SERVE_PARTITIONS and SundialWorkerModule's serve",
    async () => {
      const cluster = await fire.cluster({ partitions: 4 });
      const { logger, lines } = presenceLines();
      await cluster.dispatcher({ serve: [0] });
      await cluster.runner({}, { logger, dispatcherGraceMs: GRACE_MS, consumers: 'external' });
      await waitFor(() => lines.length > 0, { what: 'the warn line' });
      expect(lines[0].message).toContain('No Sundial dispatcher serves partitions 1-3 (of 4)');
      expect(lines[0].fields.fix).toBe(
        `Have a dispatcher serve partitions 1-3: a scheduler (apps/scheduler) with SUNDIAL_PREFIX=${cluster.prefix} whose SUNDIAL_SERVE_PARTITIONS names them (unset, it serves every partition), or an app of this prefix whose SundialWorkerModule.forRoot({ dispatch: true, serve }) names them in serve (left out, every partition).`,
      );
    },
  );

  it.concurrent(
    "announcements: one member per dispatcher, lasting 15 s; a dead one's is dropped by the next announcement",
    async () => {
      const cluster = await fire.cluster({ partitions: 8 });
      const key = `${cluster.prefix}:dispatchers`;
      // A dispatcher that died 1 s ago (its announcement ran out), left in the set.
      await fire.raw.zadd(key, (await cluster.redisNow()) - 1_000, 'gone-1|8|0-7');
      const before = await cluster.redisNow();
      await cluster.dispatcher({ serve: [1, 2, 3, 5] });
      const [member, score] = await fire.raw.zrange(key, '0', '-1', 'WITHSCORES');
      const after = await cluster.redisNow();
      expect(member).toMatch(/^.+-\d+\|8\|1-3,5$/);
      // Scored with the time it lasts to, on Redis's clock: announced between the two reads of Redis's TIME
      // (however long a loaded host took between them), within the dispatcher's estimate of that clock.
      expect(Number(score) - 15_000).toBeGreaterThanOrEqual(before - 250);
      expect(Number(score) - 15_000).toBeLessThanOrEqual(after + 250);
      expect(await fire.raw.zcard(key)).toBe(1);
      const ttl = await fire.raw.pttl(key);
      expect(ttl).toBeGreaterThan(14_000);
      expect(ttl).toBeLessThanOrEqual(15_000);
    },
  );

  it.concurrent(
    "a runner fed by SundialWorkerModule (consumers 'external') words the fix for a Nest deployment",
    async () => {
      const cluster = await fire.cluster();
      const { logger, lines } = presenceLines();
      await cluster.runner({}, { logger, dispatcherGraceMs: GRACE_MS, consumers: 'external' });
      await waitFor(() => lines.length > 0, { what: 'the warn line' });
      expect(lines[0].fields.fix).toBe(
        `Deploy the scheduler (apps/scheduler, at least one replica) with SUNDIAL_PREFIX=${cluster.prefix}, or in an app of this prefix pass dispatch: true to SundialWorkerModule.forRoot.`,
      );
    },
  );

  it.concurrent(
    'a runner and a dispatcher started together: timers fire and nothing is said; the dispatcher gone: the warn',
    async () => {
      const { cluster, lines, ran, dispatcher } = await dispatcherAndRunner();
      // Due past three graces (some ten looks): every look found the dispatcher's announcement.
      await cluster.timers.schedule({ key: 'later', handler: 'job', delay: 3 * GRACE_MS + 500 });
      await waitFor(() => ran.calls.length === 1, { what: 'the timer to run' });
      expect(lines).toEqual([]);

      // Scaled to 0: the announcement gone (this DEL, before its end: said after the 6 s quiet window).
      await dispatcher.close();
      await fire.raw.del(`${cluster.prefix}:dispatchers`);
      await waitFor(() => lines.length > 0, { what: 'the warn line', timeoutMs: 10_000 }); // deadline
      expect(lines.map((line) => line.level)).toEqual(['warn']);
    },
  );

  it.concurrent(
    "a dispatcher restarted within its announcement's 15 s (stopped, another started looks later): nothing is said",
    async () => {
      const { cluster, lines, ran, dispatcher: first } = await dispatcherAndRunner();
      // Due well after the close lands (a loaded host may take a second or two: a timer within the
      // dispatcher's 200 ms lead by then would be handed off and run), and past three graces.
      const timer = await cluster.timers.schedule({
        key: 'later',
        handler: 'job',
        delay: 3 * GRACE_MS + 3_000,
      });
      // The restart's gap, with no dispatcher running: the runner, past its grace, looks through it
      // (every 200 ms), and the timer falls due with nobody to hand it off.
      await first.close();
      await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt + GRACE_MS, {
        what: 'the gap', // deadline: ~5.4 s on Redis's clock
      });
      expect(await cluster.timers.get('later')).toMatchObject({ status: 'pending', runCount: 0 });
      await cluster.dispatcher();
      await waitFor(() => ran.calls.length === 1, { what: 'the timer to run' });
      expect(lines).toEqual([]);
    },
  );

  it.concurrent(
    'Redis restored from an older backup (announcements back at their old ends) while a dispatcher runs: nothing said',
    async () => {
      const cluster = await fire.cluster();
      const { logger, lines } = presenceLines();
      const ran = recorder();
      await cluster.dispatcher();
      await cluster.runner({ job: ran.handler }, { logger, dispatcherGraceMs: GRACE_MS });
      // Past the grace (the timer's run says so), right after an announcement (its end moved on).
      await cluster.timers.schedule({ key: 'past-grace', handler: 'job', delay: GRACE_MS + 300 });
      await waitFor(() => ran.calls.length === 1, { what: 'the timer to run' });
      const key = `${cluster.prefix}:dispatchers`;
      const [member, end] = await fire.raw.zrange(key, '0', '-1', 'WITHSCORES');
      await waitFor(async () => Number((await fire.raw.zscore(key, member)) ?? 0) > Number(end), {
        what: 'the next announcement',
        timeoutMs: 5_000, // deadline
      });
      // The restore: the member as the backup held it, its announcement run out a minute ago.
      await fire.raw.zadd(key, (await cluster.redisNow()) - 60_000, member);
      const restoredAt = Date.now();
      await waitFor(
        async () => Number((await fire.raw.zscore(key, member)) ?? 0) > (await cluster.redisNow()),
        {
          what: 'the dispatcher to announce again',
          timeoutMs: 5_000, // deadline
        },
      );
      // Two looks more (a third of the grace apart) find it: still nothing said.
      await cluster.timers.schedule({ key: 'two-looks', handler: 'job', delay: GRACE_MS });
      await waitFor(() => ran.calls.length === 2, { what: 'the second timer to run' });
      expect(Date.now() - restoredAt).toBeGreaterThan(GRACE_MS / 3);
      expect(lines).toEqual([]);
    },
  );

  it.concurrent(
    "under docs/operations.md's ACL user: announced and looked at with no refusal, and nothing said",
    async () => {
      await fire.raw.call('ACL', 'SETUSER', ...documentedAcl('pw'));
      await fire.raw.call('ACL', 'LOG', 'RESET');
      const shared = { connection: fire.url().replace('redis://', 'redis://sundial:pw@'), prefix: 'sundial' };
      const { logger, lines } = presenceLines();
      const ran = recorder();
      const timers = new RedisTimers({ ...shared, logger: silentLogger });
      const dispatcher = new Dispatcher({ ...shared, logger: silentLogger });
      const runner = new TimerRunner({
        ...shared,
        handlers: { job: ran.handler },
        logger,
        dispatcherGraceMs: GRACE_MS,
      });
      try {
        await Promise.all([dispatcher.start(), runner.start()]);
        await timers.schedule({ key: 'acl', handler: 'job', delay: 3 * GRACE_MS + 500 });
        await waitFor(() => ran.calls.length === 1, { what: 'the timer to run' });
        expect(await fire.raw.zcard('sundial:dispatchers')).toBe(1);
        expect(lines).toEqual([]);
        // The one refusal documented: the maxmemory-policy check at start, skipped without CONFIG.
        const refused = ((await fire.raw.call('ACL', 'LOG')) as unknown[][]).map(
          (entry) => entry[entry.indexOf('object') + 1],
        );
        expect(refused.filter((object) => object !== 'config|get')).toEqual([]);
      } finally {
        await runner.close(0);
        await dispatcher.close();
        await timers.dispose();
      }
    },
  );
});
