import { Inject, Injectable, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OnTimer, SundialModule, SundialWorkerModule, Timers } from '@sundial/client';
import { startRedis, waitFor } from '@sundial/testing/harness';
import { Registry } from 'prom-client';

/** A provider whose own teardown takes a while (a timer falls due meanwhile) and whose handler needs it open. */
@Injectable()
class Jobs implements OnModuleDestroy, OnApplicationShutdown {
  /** what each run found: its key and whether the provider was still open */
  readonly runs: { key: string; open: boolean }[] = [];
  /** the row and the ledger as the app's shutdown found them (before the Timers' connections close) */
  seen: { status?: string; story: string[] } | undefined;
  private open = true;

  constructor(@Inject(Timers) private readonly timers: Timers) {}

  @OnTimer('job')
  job(_payload: unknown, ctx: { key: string }): void {
    this.runs.push({ key: ctx.key, open: this.open });
  }

  async onModuleDestroy(): Promise<void> {
    await this.timers.schedule({ key: 'during-destroy', handler: 'job', delay: 0, removeOnComplete: false });
    // deadline: the run comes within milliseconds when the worker still takes jobs
    await waitFor(() => this.runs.length > 0 || undefined, { timeoutMs: 5_000, what: 'a run' }).catch(
      () => undefined,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    const row = await this.timers.get('during-destroy');
    const story = (await this.timers.history('during-destroy')).map((entry) => entry.event);
    this.seen = { status: row?.status, story };
    this.open = false;
  }
}

/**
 * The earlier note "the Redis worker takes jobs during onModuleDestroy" (docs/spec.md §4.6, §5.1): it does —
 * SundialWorkerModule's runner stops taking jobs at beforeApplicationShutdown, after every provider's
 * onModuleDestroy — and such a job is run, not dropped: its handler finds what closes in
 * onApplicationShutdown still open, its outcome is recorded and counted as for any run.
 */
describe('SundialWorkerModule: a timer due while the app runs its onModuleDestroy hooks', () => {
  it('is run during the teardown, before the drain, and recorded completed', async () => {
    const server = await startRedis();
    try {
      const registry = new Registry();
      const module = await Test.createTestingModule({
        imports: [
          SundialModule.forRoot({ connection: server.url, prefix: 'destroy' }),
          SundialWorkerModule.forRoot({ prefix: 'destroy', dispatch: true, metricsRegistry: registry }),
        ],
        providers: [Jobs],
      }).compile();
      const app = await module.init();
      const jobs = app.get(Jobs);
      await app.close();

      expect(jobs.runs).toEqual([{ key: 'during-destroy', open: true }]);
      expect(jobs.seen?.status).toBe('completed');
      expect(jobs.seen?.story[0]).toBe('completed');
      const runs = await registry.getSingleMetric('sundial_runs_total')?.get();
      expect(runs?.values.filter((value) => value.value > 0)).toEqual([
        expect.objectContaining({ labels: expect.objectContaining({ status: 'ok' }), value: 1 }),
      ]);
    } finally {
      await server.stop();
    }
  });
});
