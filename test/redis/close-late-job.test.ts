import { silentLogger } from '@sundial/core';
import { type FireJobConsumer, TimerRunner } from '@sundial/redis';
import { eventually, gate, matching, recorder, refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * A BullMQ Worker hands over, after its close() was called, the job it had fetched before (its main loop
 * runs until what it fetched is processed; close() resolves after). Seen in test/cluster/repartition.test.ts
 * when the old count's workers shut down: such a job's run was handed back while its handler went on,
 * and ran again on another worker (runCount 2, same version).
 */
describe('fire path: graceful close and a job handed over after it began', () => {
  it('runs that job within the grace: it completes once and is not handed back', async () => {
    const cluster = await fire.cluster();
    const closed = gate();
    const consumer: FireJobConsumer = {
      name: cluster.timers.keys.queueName(0),
      run: () => closed.promise,
      waitUntilReady: () => Promise.resolve(),
      // as BullMQ: resolves once the jobs it fetched were processed
      close: () => closed.promise,
      disconnect: () => Promise.resolve(),
    };
    const firstRunning = gate();
    const firstMayEnd = gate();
    const first = recorder(() => {
      firstRunning.open();
      return firstMayEnd.promise;
    });
    const firstSettled = gate();
    // The late job's handler is still going when the job that was running at close() settles.
    const late = recorder(async () => {
      firstMayEnd.open();
      await firstSettled.promise;
      await new Promise((resolve) => setImmediate(resolve));
    });
    const runner = new TimerRunner({
      connection: fire.url(),
      prefix: cluster.prefix,
      handlers: { first: first.handler, late: late.handler },
      consumers: 'external',
      logger: silentLogger,
    });
    runner.attachConsumer(consumer);
    await runner.start();
    const [one, two] = await Promise.all([
      cluster.timers.schedule({ key: 'first', handler: 'first', delay: 0 }),
      cluster.timers.schedule({ key: 'late', handler: 'late', delay: 0 }),
    ]);
    void runner.processFireJob(0, { timers: [refOf(one)] }).finally(() => firstSettled.open());
    await firstRunning.promise;

    try {
      const closing = runner.close(10_000);
      const lateJob = runner.processFireJob(0, { timers: [refOf(two)] });
      void lateJob.finally(() => closed.open());
      await closing;
    } finally {
      closed.open();
      await runner.close(0);
    }

    // Handed back, it would be pending again at runCount 1: the next worker would run it a second time.
    const row = await cluster.timers.get('late');
    expect(row && { status: row.status, runCount: row.runCount }).toBeNull();
    expect(late.calls.map((ctx) => ctx.signal.aborted)).toEqual([false]);
    await eventually(cluster.events, { type: 'completed', key: 'late' });
    expect(matching(cluster.events, { type: 'completed', key: 'first' })).toHaveLength(1);
  });
});
