import { silentLogger } from '@sundial/core';
import { FireCommands } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { setImmediate } from 'node:timers/promises';
import { useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * A lease renewal that reaches Redis after the run's completion did (the completion went while the renewal
 * was on its way) finds the lease gone: the run finished, and was recorded so. The worker logged a warn
 * `lease lost (reclaimed or settled lost): the run is aborted` for a run that was neither — seen a few
 * times a minute with a 1.5 s lease (renewals every 0.5 s) in the clock walk-through. A completing run's
 * own completion answers whether its lease was lost (a stale completion, with its own line).
 */
describe('a lease renewal answered after its run completed', () => {
  afterEach(() => jest.restoreAllMocks());

  it('says nothing of a lost lease, and the run is recorded completed', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    let renewalSent!: () => void;
    const renewing = new Promise<void>((resolve) => (renewalSent = resolve));
    let held: ReturnType<FireCommands['renewLeases']> | undefined;
    const completed = async () =>
      (await cluster.timers.history('k')).some((entry) => entry.event === 'completed');
    // The first renewal that names the run lets the handler end, and reaches Redis only once the
    // completion did: the order the race gives.
    const renew = FireCommands.prototype.renewLeases;
    jest.spyOn(FireCommands.prototype, 'renewLeases').mockImplementation(function (
      this: FireCommands,
      ...args: Parameters<FireCommands['renewLeases']>
    ) {
      if (held || !args[3].some((run) => run.key === 'k')) return renew.apply(this, args);
      renewalSent();
      held = waitFor(completed, { what: 'the completion' }).then(() => renew.apply(this, args));
      return held;
    });
    const warns: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => void warns.push(message) };
    await cluster.runner({ h: () => renewing }, { leaseMs: 300, logger });
    await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    // deadline: left once a renewal named the run (one every 100 ms) and was answered
    expect(await await waitFor(() => held, { what: 'a renewal of the run' })).toEqual(['lost']);
    await setImmediate(); // the keeper acts on the answer in the turn it came
    // Only the lease's lines: a start on a loaded host may say it waited for Redis's first answer.
    expect(warns.filter((line) => line.includes('lease'))).toEqual([]);
    expect(await completed()).toBe(true);
  });
});
