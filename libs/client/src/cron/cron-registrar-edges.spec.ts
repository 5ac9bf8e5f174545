import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { CronRegistrar, DistributedInterval, SundialModule, Timers } from '../index';

@Injectable()
class FastBeat {
  @DistributedInterval('fast', 50)
  beat(): void {}
}

describe('the @DistributedCron / @DistributedInterval registrar: edge cases', () => {
  /**
   * An app whose `limits.minEveryMs` allows a period under the default minimum (100 ms): the registrar
   * compared the stored row with the decorator by normalizing it with the default limits, so the pass
   * after the first (a second boot, a reset with the row still there, a look) refused the row the
   * backend had accepted, and the boot stopped.
   */
  it("checks and compares a row with the app's own limits: a second pass over a 50 ms interval writes nothing", async () => {
    const app = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory', limits: { minEveryMs: 10 } })],
      providers: [FastBeat],
    }).compile();
    try {
      await app.init();
      const timers = app.get(Timers);
      const first = await timers.get('interval:fast');
      expect(first).toMatchObject({ everyMs: 50, version: 1 });
      await app.get(CronRegistrar).sync();
      expect(await timers.get('interval:fast')).toMatchObject({ id: first?.id, version: 1 });
    } finally {
      await app.close();
    }
  });
});
