import { silentLogger } from '@sundial/core';
import { FireCommands } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { gate, recorder, useFirePath } from './fire-fixture';

const fire = useFirePath();

/** Renewals every 100 ms (leaseMs / 3). */
const LEASE_MS = 300;

/**
 * docs/spec.md §6.3: a run whose lease is lost is aborted with one warn. A handler that ignores its signal
 * runs on and its run is still renewed, each renewal finding the same lost lease: the warn came again at
 * every renewal (every 10 s with the default lease) for as long as the handler ran.
 */
describe('a lost lease of a handler that ignores its signal', () => {
  afterEach(() => jest.restoreAllMocks());

  it('is said once over several renewals', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    // counts the renewals that answered the run's lease lost
    let lost = 0;
    const renew = FireCommands.prototype.renewLeases;
    jest.spyOn(FireCommands.prototype, 'renewLeases').mockImplementation(async function (
      this: FireCommands,
      ...args: Parameters<FireCommands['renewLeases']>
    ) {
      const answers = await renew.apply(this, args);
      if (args[3].some((run, i) => run.key === 'k' && answers[i] === 'lost')) lost += 1;
      return answers;
    });
    const warns: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => void warns.push(message) };
    const release = gate();
    // ignores its signal: ends only when the test lets it
    const job = recorder(() => release.promise);
    await cluster.runner({ h: job.handler }, { leaseMs: LEASE_MS, logger });
    await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    const [run] = await waitFor(() => (job.calls.length > 0 ? job.calls : undefined), { what: 'the run' });
    // another worker holds the run now: its lease is lost for this one
    await fire.raw.hset(cluster.timers.keys.row('k'), 'lw', 'another-worker');
    // deadline: four renewals, 100 ms apart, on a loaded host
    await waitFor(() => lost >= 4, { timeoutMs: 5000, what: 'four renewals finding the lease lost' });
    expect(run.signal.aborted).toBe(true);
    expect(warns.filter((line) => line.includes('lease lost'))).toEqual([
      'lease lost (reclaimed or settled lost): the run is aborted',
    ]);
    release.open();
  });
});
