import { RedisTimers, SundialKeys } from '@sundial/redis';
import {
  type AppProcess,
  clusterEnv,
  killAll,
  readRuns,
  type RedisServer,
  type RunRecord,
  spawnApp,
  startRedis,
} from '@sundial/testing/harness';
import { type LedgerEntry, MAX_HISTORY_LIMIT, silentLogger, type Timer } from '@sundial/core';
import { Redis } from 'ioredis';
import { RedisNode } from './redis-node';
import { ReplyProxy } from './reply-proxy';

export const PARTITIONS = 2;
/** Short enough that runs of a killed worker come back within seconds, long enough for a loaded machine. */
export const LEASE_MS = 4_000;

/** What the Redis under test holds for each written key at the end. */
export interface FinalState {
  rows: Map<string, Timer | null>;
  tombstones: Map<string, string | null>;
  /** free runs (awaitTask=false ticks) still in flight or waiting to run again, whatever their row says */
  freeRuns: number;
}

export interface ClusterOptions {
  appendfsync?: 'always' | 'everysec';
  /** `all`: every app and the load's client reach Redis through the proxy; `scheduler-0`: only that one */
  proxy?: 'all' | 'scheduler-0';
  /** the workers' SUNDIAL_SHUTDOWN_GRACE_MS (default 25 s): shorter, a stopped worker hands runs back */
  shutdownGraceMs?: number;
}

/**
 * What a chaos scenario runs on: the Redis under test (maybe behind a reply proxy), a second private
 * Redis as the run ledger's sink (so the ledger survives faults of the first), 2 schedulers and 2
 * workers as child processes from dist, and a client for the load.
 */
export class ChaosCluster {
  readonly killedPids = new Set<number>();
  /** wrong answers the scenario itself found (to calls it made outside the load) */
  readonly wrongAnswers: string[] = [];
  readonly schedulers: AppProcess[] = [];
  readonly workers: AppProcess[] = [];
  /** with `proxy: 'scheduler-0'`, the one scheduler that reaches Redis through the proxy */
  proxiedScheduler: AppProcess | undefined;
  private readonly retired: AppProcess[] = [];
  private spawned = 0;

  private constructor(
    readonly node: RedisNode,
    readonly sink: RedisServer,
    readonly proxy: ReplyProxy | undefined,
    private readonly options: ClusterOptions,
    readonly client: RedisTimers,
  ) {}

  static async start(options: ClusterOptions): Promise<ChaosCluster> {
    const [node, sink] = await Promise.all([
      RedisNode.start({ appendfsync: options.appendfsync }),
      startRedis(),
    ]);
    const proxy = options.proxy ? await ReplyProxy.start(node.port) : undefined;
    const clientUrl = options.proxy === 'all' ? proxy!.url : node.url;
    const client = new RedisTimers({ connection: clientUrl, partitions: PARTITIONS, logger: silentLogger });
    const cluster = new ChaosCluster(node, sink, proxy, options, client);
    // Every spawn settles before a failure is thrown: runScenario tears down only a cluster it got, so
    // a failed start stops here what did start (the AOF redis-server, the sink, the apps), or they
    // would outlive the suite and keep jest's worker from exiting.
    const spawns = await Promise.allSettled([
      cluster.spawn('scheduler'),
      cluster.spawn('scheduler'),
      cluster.spawn('worker'),
      cluster.spawn('worker'),
    ]);
    const failed = spawns.find((spawn) => spawn.status === 'rejected');
    if (failed) {
      await cluster.stop();
      throw failed.reason;
    }
    return cluster;
  }

  /** Starts one more scheduler or worker and adds it to the cluster. */
  async spawn(app: 'scheduler' | 'worker'): Promise<AppProcess> {
    const n = this.spawned++;
    const list = app === 'scheduler' ? this.schedulers : this.workers;
    const proxiedScheduler =
      this.options.proxy === 'scheduler-0' && app === 'scheduler' && this.proxiedScheduler === undefined;
    const viaProxy = this.options.proxy === 'all' || proxiedScheduler;
    const env = clusterEnv(viaProxy ? this.proxy!.url : this.node.url, {
      SUNDIAL_PARTITIONS: String(PARTITIONS),
      SUNDIAL_LEASE_MS: String(LEASE_MS),
      SUNDIAL_TEST_RECORD_URL: this.sink.url,
      ...(this.options.shutdownGraceMs === undefined
        ? {}
        : { SUNDIAL_SHUTDOWN_GRACE_MS: String(this.options.shutdownGraceMs) }),
    });
    const started = await spawnApp(app, `${app}-${n}`, env);
    list.push(started);
    if (proxiedScheduler) this.proxiedScheduler = started;
    return started;
  }

  /**
   * SIGKILLs (or stops with SIGTERM) an app and takes it out of the cluster; a worker's pid joins
   * `killedPids` (a run it held may run again: it died, or it handed the run back at its shutdown).
   */
  async kill(app: AppProcess, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    if (this.workers.includes(app)) this.killedPids.add(app.pid);
    if (this.proxiedScheduler === app) this.proxiedScheduler = undefined;
    for (const list of [this.schedulers, this.workers])
      if (list.includes(app)) list.splice(list.indexOf(app), 1);
    this.retired.push(app);
    app.kill(signal);
    await app.exited;
  }

  /** The final row of every key and the id in its tombstone, read straight from the Redis under test. */
  async finalState(keys: string[]): Promise<FinalState> {
    const reader = new RedisTimers({ connection: this.node.url, partitions: PARTITIONS });
    const names = new SundialKeys('sundial', PARTITIONS);
    try {
      const rows = new Map<string, Timer | null>();
      const tombstones = new Map<string, string | null>();
      for (const key of keys) {
        rows.set(key, await reader.get(key));
        tombstones.set(key, await this.node.side.hget(names.tombstone(key), 'id'));
      }
      let freeRuns = 0;
      for (const partition of names.all()) freeRuns += await this.node.side.hlen(names.free(partition));
      return { rows, tombstones, freeRuns };
    } finally {
      await reader.dispose();
    }
  }

  /** Each key's ledger, newest first (`[]` when it has none): what the product says happened to its runs. */
  async histories(keys: string[]): Promise<Map<string, LedgerEntry[]>> {
    const reader = new RedisTimers({ connection: this.node.url, partitions: PARTITIONS });
    try {
      const histories = new Map<string, LedgerEntry[]>();
      for (const key of keys)
        histories.set(key, await reader.history(key, { limit: MAX_HISTORY_LIMIT }).catch(noHistory));
      return histories;
    } finally {
      await reader.dispose();
    }
  }

  noteWrong(text: string): void {
    this.wrongAnswers.push(text);
  }

  async runs(): Promise<RunRecord[]> {
    const sink = new Redis(this.sink.url);
    try {
      return await readRuns(sink);
    } finally {
      sink.disconnect();
    }
  }

  async stop(): Promise<void> {
    await this.client.dispose().catch(() => undefined);
    await killAll([...this.schedulers, ...this.workers, ...this.retired]);
    await this.proxy?.stop();
    await Promise.all([this.node.stop(), this.sink.stop()]);
  }
}

/** A key with no row, tombstone or ledger is refused `not-found`: it has no history. Any other error throws. */
function noHistory(error: Error & { reason?: string }): LedgerEntry[] {
  if (error.reason === 'not-found') return [];
  throw error;
}
