import {
  type DynamicModule,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { type Timer, type TimerContext } from '@sundial/core';
import {
  CronRegistrar,
  DistributedCron,
  SundialModule,
  SundialWorker,
  SundialWorkerModule,
  Timers,
} from '@sundial/client';
import { waitFor } from '@sundial/testing/harness';
import { type FireCluster, matching, recorder, useFirePath } from '../redis/fire-fixture';

// docs/spec.md §5.1, a rolling deploy: the first replica of a newer build boots with a new
// @DistributedCron while workers of the older build (without its handler) run. Its row is written only
// once the replica's own runner announced the handler (`P:handlers`): from then on the older workers pass
// its runs on. Written at SundialModule's bootstrap, before the worker module's, a first slot due in
// between was claimed by an older worker and failed `unknown-handler`.

const ROW = 'cron:first';

/** The newer build: a cron every second, so its first slot falls due within a second of the row. */
@Injectable()
class NewBuild {
  readonly runs: TimerContext[] = [];

  @DistributedCron('first', '* * * * * *')
  first(_payload: unknown, ctx: TimerContext): void {
    this.runs.push(ctx);
  }
}

const WARMUP_HOLD = Symbol('warmup-hold');
type Hold = (timers: Timers) => Promise<Timer | null>;

/**
 * The app's own bootstrap work between SundialModule's hook (global: first) and SundialWorkerModule's (a
 * cache warm-up, a migration): here it holds the boot until a row written meanwhile had its first slot
 * settled, so the gap is as long as a slow boot makes it. It keeps the row as it found it.
 */
@Injectable()
class Warmup implements OnApplicationBootstrap {
  found: Timer | null | undefined;
  constructor(
    @Inject(Timers) private readonly timers: Timers,
    @Inject(WARMUP_HOLD) private readonly hold: Hold,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.found = await this.hold(this.timers);
  }
}

@Module({})
class WarmupModule {
  static holding(hold: Hold): DynamicModule {
    return { module: WarmupModule, providers: [{ provide: WARMUP_HOLD, useValue: hold }, Warmup] };
  }
}

/** One level deeper than the worker module: Nest runs its hook before the worker module's. */
@Module({})
class FeatureModule {
  static holding(hold: Hold): DynamicModule {
    const warmup = WarmupModule.holding(hold);
    return { module: FeatureModule, imports: [warmup], exports: [warmup] };
  }
}

describe('a new @DistributedCron during a rolling deploy: its first slot (docs/spec.md §5.1)', () => {
  const fire = useFirePath();
  const apps: TestingModule[] = [];
  let cluster: FireCluster;
  let old: ReturnType<typeof recorder>;

  beforeEach(async () => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    cluster = await fire.cluster();
    await cluster.dispatcher();
    old = recorder();
    // a worker of the older build: it lacks `first`
    await cluster.runner({ other: old.handler }, { workerId: 'old' });
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    jest.restoreAllMocks();
  });

  async function newReplica(hold: Hold, autoStart?: boolean): Promise<TestingModule> {
    const { prefix } = cluster;
    const app = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({ connection: fire.url(), prefix, partitions: 1 }),
        FeatureModule.holding(hold),
        SundialWorkerModule.forRoot({ prefix, partitions: 1, autoStart }),
      ],
      providers: [NewBuild],
    }).compile();
    apps.push(app);
    await app.init();
    return app;
  }

  it('the first replica of the newer build writes the row once its runner announced the handler: no slot fails, each runs once on it', async () => {
    // A row found during the warm-up is held until its first slot settled (failed on the older worker).
    const app = await newReplica(async (timers) => {
      const row = await timers.get(ROW);
      if (row === null) return null;
      await waitFor(() => cluster.events.some((event) => event.key === ROW && event.type !== 'scheduled'), {
        timeoutMs: 5_000, // deadline: a slot is due within a second of the row
        what: 'the first slot of the row written during the warm-up to settle',
      });
      return row;
    });
    // written by the end of the app's init
    expect((await app.get(CronRegistrar).rows()).map((row) => row.key)).toEqual([ROW]);

    const build = app.get(NewBuild);
    const ran = await waitFor(
      async () => {
        const row = await cluster.timers.get(ROW);
        return build.runs.length > 0 && row !== null && row.runCount >= 1 && row.status !== 'running' && row;
      },
      { timeoutMs: 5_000, what: 'the first slot to run' }, // deadline: due within a second
    );
    expect(matching(cluster.events, { key: ROW, type: 'failed' })).toEqual([]);
    expect(app.get(Warmup).found).toBeNull(); // not written before the runner announced the handler
    expect(ran.last).toMatchObject({ status: 'ok' });
    const history = await cluster.timers.history(ROW);
    expect(history.filter((entry) => entry.event === 'failed')).toEqual([]);
    const claimed = history.filter((entry) => entry.event === 'claimed');
    const worker = app.get(SundialWorker).workerId;
    expect(claimed.map((entry) => entry.workerId)).toEqual(claimed.map(() => worker));
    // each slot claimed and run once
    const dues = claimed.map((entry) => entry.due);
    expect(new Set(dues).size).toBe(dues.length);
    const runDues = build.runs.map((run) => run.due);
    expect(new Set(runDues).size).toBe(runDues.length);
    expect(old.calls).toEqual([]);
  });

  it('with autoStart: false the rows wait for the worker started by hand, whose start ends with them written', async () => {
    const app = await newReplica((timers) => timers.get(ROW), false);
    expect(app.get(Warmup).found).toBeNull();
    expect(await cluster.timers.get(ROW)).toBeNull(); // the init ended, the worker not started
    const worker = app.get(SundialWorker);
    try {
      await worker.start();
      expect((await app.get(CronRegistrar).rows()).map((row) => row.key)).toEqual([ROW]);
    } finally {
      await worker.stop();
    }
  });
});
