import { ledgerSizeFromEnv, OptionReader, type SundialLogger, validateLedgerSize } from '@sundial/core';
import type { RedisOptions } from 'ioredis';
import { warnNestedPrefix } from './nested-prefix';
import { SundialKeys } from '../store/keys';
import { migrateLiveIds } from '../store/live-ids-migration';
import { defineCommands, loadFunctions } from '../store/script-loader';
import { ClusterClock } from './cluster-clock';
import { checkPartitionCount, type RepartitionRecord } from './partition-count';
import { closeRedis, namesCluster, openRedis, type RedisClient, type RedisConnection } from './connection';
import { reportIoredisPatch } from './ioredis-closures';
import { START_REDIS_WAIT_MS, waitForRedis } from './wait-for-redis';

/** Where the partitions are: what every Redis-backed class of this lib is given. */
export interface PartitionedOptions {
  /** A redis:// or rediss:// URL, or ioredis options. */
  connection: RedisConnection;
  /** key prefix `P` of `P:{pN}:...` (default 'sundial') */
  prefix?: string;
  /** partitions, each one hash slot (default 1) */
  partitions?: number;
  /**
   * Entries each timer's ledger keeps (docs/spec.md §3.9): default SUNDIAL_LEDGER (`off` or a number),
   * else 50; 0 writes no ledger. Give every process of a deployment the same.
   */
  ledger?: number;
  /**
   * How long a start (`start()`, `connect()`) waits for Redis to answer before its store checks, logging
   * once that it waits, then fails saying why (default 30000; 0 does not wait). A refusal that is not an
   * outage (a wrong password, NOPERM, another partition count) fails at once.
   */
  startWaitMs?: number;
}

/**
 * What every class working on the partitions owns: the key layout, one command connection with the Lua
 * commands defined on it, its typed command wrappers, Redis's clock as seen from here, and closing them.
 * Subclasses open their other connections (subscriber, BullMQ) themselves and close those first.
 */
export abstract class Partitioned<Commands = undefined> {
  readonly keys: SundialKeys;
  protected readonly redis: RedisClient;
  protected readonly clock: ClusterClock;
  protected readonly commands: Commands;
  protected readonly startWaitMs: number;

  protected constructor(
    options: PartitionedOptions,
    commands: (redis: RedisClient, keys: SundialKeys, clock: ClusterClock) => Commands,
    redisOptions: RedisOptions = {},
  ) {
    // the start's wait is a Node timer (each ping's): past the longest one it gave up after 1 ms
    const read = OptionReader.of(new.target.name, options, "{ connection: 'redis://127.0.0.1:6379' }");
    read.timerMs('startWaitMs', 0, '30000');
    this.startWaitMs = options.startWaitMs ?? START_REDIS_WAIT_MS;
    // Every option checked before the connection opens: a refusal leaves none behind.
    this.keys = new SundialKeys(
      options.prefix,
      options.partitions,
      namesCluster(options.connection) ? 'spread' : 'plain',
      options.ledger === undefined
        ? ledgerSizeFromEnv(process.env.SUNDIAL_LEDGER)
        : validateLedgerSize(options.ledger),
    );
    this.redis = openRedis(options.connection, redisOptions);
    defineCommands(this.redis);
    this.clock = new ClusterClock(this.redis);
    this.commands = commands(this.redis, this.keys, this.clock);
  }

  /**
   * At start: says why ioredis runs unpatched, if it does (once per process, reportIoredisPatch). Waits
   * for Redis to answer (up to `startWaitMs`: a process started during a short outage starts once Redis is back, instead of failing its checks after ioredis's retries and, on Kubernetes,
   * crash-looping with back-off long after). Then loads the Redis Functions (`loadFunctions`: a Redis before 7.0 or an ACL user that may not
   * load them is refused here, not at the first fire call or write). Refuses to go on when the timers
   * under this prefix were written with another partition count; resolves the repartition this process
   * joins (it has the new count), else null. Then converts what a version before the live-id bitmaps left
   * (`migrateLiveIds`), so that no process of the new version answers `check`/`snapshot` or ends a timer
   * before its partition's ids are bits.
   */
  protected async prepareStore(
    logger: Pick<SundialLogger, 'warn' | 'info'>,
    waitMs = this.startWaitMs,
  ): Promise<RepartitionRecord | null> {
    reportIoredisPatch(logger);
    if (waitMs > 0) await waitForRedis(this.redis, logger, { deadlineMs: waitMs });
    await loadFunctions(this.redis);
    const joining = await checkPartitionCount(this.redis, this.keys);
    await warnNestedPrefix(this.redis, this.keys, logger);
    await migrateLiveIds(this.redis, this.keys);
    return joining;
  }

  /**
   * Its estimate of Redis now (epoch ms, docs/spec.md §4.4): a started `Dispatcher` or `TimerRunner`
   * measures it at start and every 60 s (the scheduler's and the worker's `Sundial-Now` header); before
   * any measure, this process's clock.
   */
  redisNow(): number {
    return this.clock.now();
  }

  /** Stops the clock's resync and closes the command connection. */
  protected async closeConnection(): Promise<void> {
    this.clock.stop();
    await closeRedis(this.redis);
  }
}

/** For classes that use no command wrappers. */
export const noCommands = (): undefined => undefined;
