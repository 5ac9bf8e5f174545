import { Injectable, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { OnTimer, SundialModule, SundialWorkerModule, Timers } from '@sundial/client';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import { Registry } from 'prom-client';

/** What the app's handlers use: open until onApplicationShutdown, as docs/spec.md §5.1 says to close it. */
@Injectable()
class Database implements OnApplicationShutdown {
  open = true;
  onApplicationShutdown(): void {
    this.open = false;
  }
}

@Injectable()
class Jobs implements OnModuleDestroy {
  /** what each run found: its key and whether the database was open */
  readonly runs: { key: string; open: boolean }[] = [];

  constructor(
    private readonly timers: Timers,
    private readonly database: Database,
  ) {}

  @OnTimer('job')
  job(_payload: unknown, ctx: { key: string }): void {
    this.runs.push({ key: ctx.key, open: this.database.open });
  }

  /** A provider whose own teardown takes a while; a timer falls due meanwhile. */
  async onModuleDestroy(): Promise<void> {
    await this.timers.schedule({ key: 'during-destroy', handler: 'job', delay: 0, removeOnComplete: false });
    await waitFor(() => this.runs.length > 0 || undefined, { timeoutMs: 5_000, what: 'a run' }).catch(
      () => undefined,
    );
  }
}

/**
 * The earlier note "the Redis worker takes jobs during onModuleDestroy" (docs/spec.md §4.6, §5.1): it does —
 * SundialWorkerModule's runner stops taking jobs at beforeApplicationShutdown, after every provider's
 * onModuleDestroy — and such a job is run, not dropped: its handler finds what closes in
 * onApplicationShutdown still open, its outcome is recorded and counted as for any run.
 */
describe('SundialWorkerModule: a timer due while the app runs its onModuleDestroy hooks', () => {
  let server: RedisServer;
  let app: TestingModule | undefined;

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await app?.close();
    await server?.stop();
  });

  it('is run during the teardown, before the drain, and recorded completed', async () => {
    const registry = new Registry();
    const module = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({ connection: server.url, prefix: 'destroy' }),
        SundialWorkerModule.forRoot({ prefix: 'destroy', dispatch: true, metricsRegistry: registry }),
      ],
      providers: [Database, Jobs],
    }).compile();
    app = await module.init();
    const jobs = app.get(Jobs);
    const timers = app.get(Timers);
    let row: Awaited<ReturnType<Timers['get']>> = null;
    let history: string[] = [];
    // read before the Timers' connections close (onApplicationShutdown)
    jest.spyOn(app.get(Database), 'onApplicationShutdown').mockImplementation(async function (
      this: Database,
    ) {
      row = await timers.get('during-destroy');
      history = (await timers.history('during-destroy')).map((entry) => entry.event);
      this.open = false;
    });
    await app.close();
    app = undefined;

    expect(jobs.runs).toEqual([{ key: 'during-destroy', open: true }]);
    expect(row).toMatchObject({ status: 'completed' });
    expect(history[0]).toBe('completed');
    const runs = await registry.getSingleMetric('sundial_runs_total')?.get();
    expect(runs?.values.filter((value) => value.value > 0)).toEqual([
      expect.objectContaining({ labels: expect.objectContaining({ status: 'ok' }), value: 1 }),
    ]);
  });
});
