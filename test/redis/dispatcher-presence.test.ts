import { type LogFields, silentLogger, type SundialLogger } from '@sundial/core';
import { Dispatcher, RedisTimers, TimerRunner } from '@sundial/redis';
import { waitFor } from '@sundial/testing';
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
 * nothing by itself. Each dispatcher writes `P:dispatcher` (TTL 15 s) every few seconds from its passes;
 * each runner looks, and says once when none has run past its grace, and once when one runs again.
 */
describe('runners tell a prefix with no dispatcher', () => {
  const fire = useFirePath();

  it('a runner alone warns once past its grace, naming the prefix and the fix; a dispatcher started later: one info line', async () => {
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
  });

  it("a runner fed by SundialWorkerModule (consumers 'external') words the fix for a Nest deployment", async () => {
    const cluster = await fire.cluster();
    const { logger, lines } = presenceLines();
    await cluster.runner({}, { logger, dispatcherGraceMs: GRACE_MS, consumers: 'external' });
    await waitFor(() => lines.length > 0, { what: 'the warn line' });
    expect(lines[0].fields.fix).toBe(
      `Deploy the scheduler (apps/scheduler, at least one replica) with SUNDIAL_PREFIX=${cluster.prefix}, or in an app of this prefix pass dispatch: true to SundialWorkerModule.forRoot.`,
    );
  });

  it('a runner and a dispatcher started together: timers fire and nothing is said; the dispatcher gone: the warn', async () => {
    const cluster = await fire.cluster();
    const { logger, lines } = presenceLines();
    const ran = recorder();
    const dispatcher = await cluster.dispatcher();
    await cluster.runner({ job: ran.handler }, { logger, dispatcherGraceMs: GRACE_MS });
    // Due past three graces (some ten looks): every look found the dispatcher's announcement.
    await cluster.timers.schedule({ key: 'later', handler: 'job', delay: 3 * GRACE_MS + 500 });
    await waitFor(() => ran.calls.length === 1, { what: 'the timer to run' });
    expect(lines).toEqual([]);

    // Scaled to 0: the announcement expires (its TTL, 15 s, is what this DEL stands for).
    await dispatcher.close();
    await fire.raw.del(`${cluster.prefix}:dispatcher`);
    await waitFor(() => lines.length > 0, { what: 'the warn line' });
    expect(lines.map((line) => line.level)).toEqual(['warn']);
  });

  it("under docs/operations.md's ACL user: announced and looked at with no refusal, and nothing said", async () => {
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
      expect(await fire.raw.exists('sundial:dispatcher')).toBe(1);
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
  });
});
