import type { Logger } from '@nestjs/common';
import type { RedisTimers } from '@sundial/redis';
import { DeclarationTurns } from './declaration-turns';

/**
 * A pass that keeps failing is redone at every look (every `cronRefreshMs`): its warn used to come at each
 * one. The turns are asked of a stand-in for RedisTimers' declarationTurn (this replica's set is always the
 * newest, its pass always due), on jest's clock.
 */
describe('DeclarationTurns: a pass that keeps failing', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('warns at the first failure, at most once each 30 s with a count, and says once when a pass runs again', async () => {
    const lines: string[] = [];
    const logger = {
      warn: (line: string) => lines.push(`warn ${line}`),
      log: (line: string) => lines.push(`log ${line}`),
    } as unknown as Logger;
    const timers = {
      declarationTurn: (_app: string, set: string) =>
        Promise.resolve({ newest: set, firstSeen: 1, pass: true }),
    } as unknown as RedisTimers;
    let failing = true;
    const turns = new DeclarationTurns(timers, 'billing', 'abcdef0123456789', 100, logger);
    turns.start(() => (failing ? Promise.reject(new Error('NOPERM no permissions')) : Promise.resolve()));

    await jest.advanceTimersByTimeAsync(60_050); // virtual clock: 600 looks, each pass failing
    const what =
      "appName 'billing': the @DistributedCron/@DistributedInterval pass of this replica's set (abcdef012345), the newest now";
    expect(lines[0]).toBe(
      `warn ${what}: failed; each look (every 100 ms) runs it again: Error: NOPERM no permissions`,
    );
    expect(lines.length).toBe(2); // the first, then one line per 30 s: 2 for 600 failures (600 warns before)
    expect(lines[1]).toMatch(/^warn .*: still failing, 300 errors not logged in 30000 ms; the last: failed;/);

    failing = false;
    await jest.advanceTimersByTimeAsync(1_000); // virtual clock: ten more looks, each pass done
    expect(lines.slice(2)).toEqual([
      expect.stringMatching(/^log .*: its pass ran again \(\d+ errors not logged since the last line\)$/),
    ]);
    await turns.stop();
  });
});
