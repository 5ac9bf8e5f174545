import type { SundialLogger } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { recorder, useFirePath } from './fire-fixture';

const fire = useFirePath();

/** Every warn line with its fields. */
function warnings(): SundialLogger & { warned: { message: string; fields?: Record<string, unknown> }[] } {
  const warned: { message: string; fields?: Record<string, unknown> }[] = [];
  const none = () => undefined;
  return {
    warned,
    error: none,
    info: none,
    debug: none,
    warn: (message, fields) => void warned.push({ message, fields }),
  };
}

/**
 * A worker whose grace ends with runs still going hands them back (docs/spec.md §4.6): one warn line names
 * their timers and what becomes of each — at-least-once runs again on another worker, at-most-once is
 * recorded lost. Before, nothing was logged that named them.
 */
describe('fire path: the hand-back at the end of a close is logged with its keys', () => {
  it('one warn line per close, by delivery mode, saying what then happens to each', async () => {
    const cluster = await fire.cluster();
    const logger = warnings();
    // handlers that ignore their signal: still going when the grace (0) ends
    const stuck = recorder(() => new Promise(() => undefined));
    const runner = await cluster.runner({ stuck: stuck.handler }, { logger });
    await Promise.all([
      cluster.timers.schedule({ key: 'again-1', handler: 'stuck', delay: 0, removeOnComplete: false }),
      cluster.timers.schedule({ key: 'again-2', handler: 'stuck', delay: 0, removeOnComplete: false }),
      cluster.timers.schedule({
        key: 'once',
        handler: 'stuck',
        delay: 0,
        delivery: 'at-most-once',
        removeOnComplete: false,
      }),
    ]);
    await cluster.dispatcher();
    await waitFor(() => stuck.calls.length === 3 || undefined, { timeoutMs: 10_000, what: 'three runs' });

    await runner.close(0);

    const lines = logger.warned.filter((line) => /handed back/.test(line.message));
    expect(lines).toHaveLength(1);
    expect(lines[0].message).toMatch(
      /^Sundial worker: 3 runs still going at the end of the shutdown grace, aborted and handed back; at-least-once, they run again on another worker: again-[12], again-[12]; at-most-once, recorded lost \(reason 'lost'\), not run again: once$/,
    );
    expect(lines[0].fields).toMatchObject({ lost: ['once'] });
    expect([...(lines[0].fields?.runAgain as string[])].sort()).toEqual(['again-1', 'again-2']);
    // what the line says is what happened
    const [again1, again2, once] = await Promise.all(
      ['again-1', 'again-2', 'once'].map((key) => cluster.timers.get(key)),
    );
    expect([again1?.status, again2?.status]).toEqual(['pending', 'pending']);
    expect(once).toMatchObject({ status: 'failed', last: { status: 'failed', error: { reason: 'lost' } } });
  });
});
