import { OptionReader, refusals, type TimerHandlerMap, validateLedgerSize } from '@sundial/core';
import {
  claimAheadOf,
  connectionKeyPrefix,
  dispatcherGraceOf,
  parseRedisUrl,
  servedPartitions,
} from '@sundial/redis';
import type { SundialModuleOptions } from './sundial-module-options';
import type {
  SundialWorkerModuleAsyncOptions,
  SundialWorkerModuleOptions,
  SundialWorkerStaticField,
} from './worker/sundial-worker-options';

// The options of SundialModule and SundialWorkerModule, checked at boot before anything is opened or
// written: a wrong one is the `invalid` refusal (reason, field, message, fix) and the app does not start.

const COMMON = ['backend', 'limits', 'tombstoneMs', 'logger', 'ledger', 'appName'] as const;
const REDIS_FIELDS = [
  ...COMMON,
  'connection',
  'prefix',
  'partitions',
  'metricsRegistry',
  'startWaitMs',
  'commandTimeoutMs',
  'cronRefreshMs',
];
const MEMORY_FIELDS = [...COMMON, 'clock', 'handlers', 'shutdownGraceMs'];
const WORKER_FIELDS = [
  'prefix',
  'partitions',
  'serve',
  'tagging',
  'configKey',
  'concurrency',
  'leaseMs',
  'claimAheadMs',
  'consumerStallMs',
  'dispatcherGraceMs',
  'shutdownGraceMs',
  'handlers',
  'dispatch',
  'reconcileMs',
  'autoStart',
  'metricsRegistry',
];
/** forRootAsync's own options: the queue identity, named when the module is defined. */
const WORKER_STATIC_FIELDS: readonly SundialWorkerStaticField[] = [
  'prefix',
  'partitions',
  'serve',
  'tagging',
  'configKey',
];
const LOGGER_METHODS = ['error', 'warn', 'info', 'debug'];
const REGISTRY_METHODS = ['registerMetric', 'getSingleMetric'];

/** SundialModule's options (forRoot's, or what forRootAsync's factory returned), checked. */
export function checkSundialModuleOptions(value: unknown): SundialModuleOptions {
  const read = OptionReader.of(
    'SundialModule',
    value,
    "SundialModule.forRoot({ connection: 'redis://127.0.0.1:6379' }) or forRoot({ backend: 'memory' })",
  );
  const memory = read.choice('backend', ['redis', 'memory']) === 'memory';
  read.only(memory ? MEMORY_FIELDS : REDIS_FIELDS);
  if (memory) {
    read.methods('clock', ['now', 'setTimeout', 'clearTimeout'], 'a Clock (e.g. new VirtualClock())');
    read.handlers('handlers');
    read.integer('shutdownGraceMs', 0, '25000');
  } else {
    checkConnection(read);
    checkQueueIdentity(read);
    read.methods('metricsRegistry', REGISTRY_METHODS, 'a prom-client Registry');
    // each of these becomes a Node timer: none past the longest one (it would fire after 1 ms)
    read.timerMs('startWaitMs', 0, '10000');
    read.timerMs('commandTimeoutMs', 1, '5000');
    read.timerMs('cronRefreshMs', 100, '5000');
  }
  read.limits();
  read.integer('tombstoneMs', 0, '604800000 (7 days)');
  read.methods('logger', LOGGER_METHODS, 'a SundialLogger');
  if (read.given.ledger !== undefined) validateLedgerSize(read.given.ledger);
  read.text('appName', 'billing');
  return value as SundialModuleOptions;
}

/** SundialWorkerModule.forRoot's options, checked when the module is defined (they name its queues). */
export function checkWorkerModuleOptions(value: unknown): SundialWorkerModuleOptions {
  const read = OptionReader.of(
    'SundialWorkerModule',
    value,
    'SundialWorkerModule.forRoot({ concurrency: 16 })',
  );
  read.only(WORKER_FIELDS);
  checkQueueIdentity(read);
  const { serve } = read.given;
  if (serve !== undefined && !Array.isArray(serve)) {
    throw read.refuse(
      'serve',
      'is not an array of partitions',
      'Write serve as an array of partition numbers, e.g. [0, 2], or leave it out to serve them all.',
    );
  }
  read.choice('tagging', ['plain', 'spread']);
  read.text('configKey', 'sundial');
  read.integer('concurrency', 1, '16');
  read.timerMs('leaseMs', 100, '30000');
  claimAheadOf(read.given.claimAheadMs);
  read.timerMs('consumerStallMs', 100, '30000');
  dispatcherGraceOf(read.given.dispatcherGraceMs);
  read.integer('shutdownGraceMs', 0, '25000');
  read.handlers('handlers');
  read.boolean('dispatch');
  read.timerMs('reconcileMs', 10, '5000');
  read.boolean('autoStart');
  read.methods('metricsRegistry', REGISTRY_METHODS, 'a prom-client Registry');
  const options = value as SundialWorkerModuleOptions;
  servedPartitions(options);
  return options;
}

/**
 * forRootAsync's own options, checked when the module is defined: the queue identity as forRoot's, and
 * one way to the rest (useFactory, useClass or useExisting).
 */
export function checkWorkerAsyncOptions<M extends TimerHandlerMap>(
  given: SundialWorkerModuleAsyncOptions<M>,
): SundialWorkerModuleOptions {
  const { useFactory, useClass, useExisting } = given;
  const identity = Object.fromEntries(WORKER_STATIC_FIELDS.map((field) => [field, given[field]]));
  const asyncFields = ['imports', 'inject', 'useFactory', 'useClass', 'useExisting'];
  const other = Object.keys(given).find(
    (key) => !asyncFields.includes(key) && !WORKER_STATIC_FIELDS.some((f) => f === key),
  );
  if (other !== undefined) {
    throw refusals.invalid(
      other,
      `SundialWorkerModule.forRootAsync takes ${other} from its factory, not beside it.`,
      `Return ${other} from useFactory (or createSundialWorkerOptions); forRootAsync itself takes ${[...WORKER_STATIC_FIELDS, ...asyncFields].join(', ')}.`,
    );
  }
  const ways = [useFactory, useClass, useExisting].filter((way) => way !== undefined).length;
  if (ways !== 1) {
    throw refusals.invalid(
      'useFactory',
      `SundialWorkerModule.forRootAsync needs one of useFactory, useClass and useExisting (given ${ways}).`,
      'Pass forRootAsync({ imports: [ConfigModule], inject: [ConfigService], useFactory: (config) => ({ concurrency: config.get(...) }) }), or useClass / useExisting of a SundialWorkerOptionsFactory.',
    );
  }
  return checkWorkerModuleOptions(identity);
}

/**
 * What forRootAsync's factory gave, checked at boot as forRoot's options are (before any connection);
 * a queue-identity field there is refused: the queues were named when the module was defined.
 */
export function checkWorkerFactoryOptions(
  identity: SundialWorkerModuleOptions,
  value: unknown,
): SundialWorkerModuleOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refusals.invalid(
      undefined,
      `SundialWorkerModule.forRootAsync's factory gave ${value === null ? 'null' : typeof value}, not an options object.`,
      'Return the options from useFactory (or createSundialWorkerOptions), e.g. { concurrency: 16 }; {} for the defaults.',
    );
  }
  const given = value as Record<string, unknown>;
  const field = WORKER_STATIC_FIELDS.find((name) => given[name] !== undefined);
  if (field !== undefined) {
    throw refusals.invalid(
      field,
      `SundialWorkerModule.forRootAsync's factory gave ${field}, which names the fire queues: @nestjs/bullmq registers them when the module is defined, before the factory runs.`,
      `Pass ${field} to forRootAsync({ ${field}, useFactory }) itself, not from the factory.`,
    );
  }
  return checkWorkerModuleOptions({ ...given, ...identity });
}

/** `prefix` and `partitions`: the key layout and queue names; a brace in the prefix would move hash tags. */
function checkQueueIdentity(read: OptionReader): void {
  read.text('prefix', 'sundial', '{}');
  read.integer('partitions', 1, '4');
}

function checkConnection(read: OptionReader): void {
  const { connection } = read.given;
  if (typeof connection === 'string') {
    parseRedisUrl(connection);
    return;
  }
  if (typeof connection === 'object' && connection !== null && !Array.isArray(connection)) {
    refuseKeyPrefix(connection);
    return;
  }
  const fix =
    "Pass connection: a URL (e.g. 'redis://127.0.0.1:6379'), ioredis options, or an ioredis client; or backend: 'memory'.";
  // Most often a forRootAsync factory's ConfigService.get of a variable that is not set: said as such,
  // not as "connection undefined is missing".
  if (connection === undefined) {
    throw refusals.invalid(
      'connection',
      'SundialModule: connection is missing (undefined).',
      `${fix} From forRootAsync, the factory gave none: a ConfigService.get of an unset variable (REDIS_URL?) gives undefined, where getOrThrow names it.`,
    );
  }
  throw read.refuse('connection', 'is not a Redis URL, ioredis options or an ioredis client', fix);
}

/**
 * ioredis's `keyPrefix` (an app's client made for its own keys, or in the options): the timers went to
 * `<keyPrefix><prefix>:…`, where the stock apps, which connect without it, never look (no timer of the
 * app fired), and SundialWorkerModule stopped the boot with BullMQ's own words from inside
 * @nestjs/bullmq (`ioredis does not support ioredis prefixes`). `prefix` names the same keys.
 */
function refuseKeyPrefix(connection: object): void {
  const keyPrefix = connectionKeyPrefix(connection);
  if (keyPrefix === undefined) return;
  throw refusals.invalid(
    'connection.keyPrefix',
    `SundialModule: connection has ioredis keyPrefix ${JSON.stringify(keyPrefix)}: BullMQ, which carries the fire jobs, refuses it, and the apps that dispatch and run the timers (apps/scheduler, apps/worker) connect without it and would never see them.`,
    `Give SundialModule a connection without keyPrefix (a URL or options, not the app's prefixed client) and name the keys with prefix: ${JSON.stringify(`${keyPrefix}sundial`)} (the keys it wrote), the same prefix to SundialWorkerModule and SUNDIAL_PREFIX to the stock apps.`,
  );
}
