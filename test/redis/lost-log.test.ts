import type { SundialLogger } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import {
  claimedByDeadWorker,
  eventually,
  type FireCluster,
  recorder,
  refOf,
  useFirePath,
} from './fire-fixture';

const fire = useFirePath();

/** Every warn line. */
function warnings(): SundialLogger & { warned: string[] } {
  const warned: string[] = [];
  const none = () => undefined;
  return { warned, error: none, info: none, debug: none, warn: (message) => void warned.push(message) };
}

/** An at-most-once one-shot claimed by a worker that then dies: its lease (100 ms) runs out. */
const lostRun = (cluster: FireCluster, key: string) =>
  claimedByDeadWorker(cluster, fire.raw, key, 'at-most-once');

/**
 * docs/operations.md SundialRunsLost sends the on-call to the logs for the lost timers' keys. A worker
 * that died logs nothing, and what settled its runs logged only counts (`reconciled`, lost: 1) or nothing
 * (a claim): one warn line now names them.
 */
describe('fire path: an at-most-once run lost with its worker is logged by key', () => {
  it('settled by the reconciler', async () => {
    const cluster = await fire.cluster();
    await lostRun(cluster, 'invoice:7');
    const logger = warnings();
    expect(await cluster.reconciler({ logger }).reconcileOnce()).toMatchObject({ lost: 1 });
    expect(logger.warned).toEqual([
      "Sundial: 1 at-most-once run lost with its worker (lease expired), recorded failed with reason 'lost' and not run again: invoice:7",
    ]);
    expect(await cluster.timers.get('invoice:7')).toMatchObject({ status: 'failed' });
  });

  it('settled by the claim of a redelivered job', async () => {
    const cluster = await fire.cluster();
    const logger = warnings();
    const handler = recorder();
    await cluster.runner({ h: handler.handler }, { logger });
    const timer = await lostRun(cluster, 'invoice:8');
    await cluster.queueOf('invoice:8').add('fire', { timers: [refOf(timer)] }, { jobId: 'redelivered' });
    await eventually(cluster.events, { type: 'failed', key: 'invoice:8' });
    await waitFor(() => logger.warned.length > 0 || undefined, { what: 'the warn line' });
    expect(logger.warned).toEqual([
      "Sundial: 1 at-most-once run lost with its worker (lease expired), recorded failed with reason 'lost' and not run again: invoice:8",
    ]);
    expect(handler.calls).toEqual([]);
  });
});
