import { ledgerSizeFromEnv, refusals } from '@sundial/core';
import {
  checkKeyPrefix,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_LAYOUT_WATCH_MS,
  MAX_PARTITIONS,
  parseRedisUrl,
  servedPartitions,
} from '../../redis/src/option-defaults'; // not @sundial/redis's index: ioredis and BullMQ (option-defaults.ts)
import type { Env } from './env';
import { envInt, envOptional, envString } from './env';
import { DEFAULT_HTTP_KEEPALIVE_MS, MAX_HTTP_KEEPALIVE_MS } from './http-timeouts';
import { type LogLevelName, parseLogLevel } from './pino-logger';

/** What every Sundial process reads from the environment (docs/spec.md §5.4). */
export interface ClusterConfig {
  redisUrl: string;
  prefix: string;
  partitions: number;
  /** SUNDIAL_SERVE_PARTITIONS: the partitions this process hands off, reconciles, consumes (undefined: all) */
  serve?: number[];
  logLevel: LogLevelName;
  /** SUNDIAL_LISTEN_HOST: the address the HTTP port binds (undefined: every interface, as in a container) */
  listenHost?: string;
  /** SUNDIAL_COMMAND_TIMEOUT_MS: how long a Sundial client call waits for each Redis reply (the API answers 503) */
  commandTimeoutMs: number;
  /**
   * SUNDIAL_LAYOUT_WATCH_MS: how often the process looks at its partition count (a finished repartition
   * shuts it down) and at the markers of the data it saw (a loss is told)
   */
  layoutWatchMs: number;
  /**
   * SUNDIAL_HTTP_KEEPALIVE_MS: how long the HTTP port keeps an idle kept-alive connection (above the
   * proxies' own: they, not the app, close an idle one)
   */
  httpKeepAliveMs: number;
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function clusterConfigFromEnv(env: Env): ClusterConfig {
  const redisUrl = envString(env, 'REDIS_URL', DEFAULT_REDIS_URL);
  // a malformed URL, or a prefix with a brace, stops the process at start, saying what to write
  checked('REDIS_URL', () => parseRedisUrl(redisUrl));
  const prefix = envString(env, 'SUNDIAL_PREFIX', 'sundial');
  checked('SUNDIAL_PREFIX', () => checkKeyPrefix(prefix));
  const partitions = envInt(env, 'SUNDIAL_PARTITIONS', 1, 1, MAX_PARTITIONS);
  // read again by each Redis class whose `ledger` option is left out (infra/partitioned.ts); checked
  // here so that a bad value is the start's fatal line, not an error of the app's wiring
  ledgerSizeFromEnv(env.SUNDIAL_LEDGER);
  return {
    redisUrl,
    prefix,
    partitions,
    serve: parseServePartitions(env.SUNDIAL_SERVE_PARTITIONS, partitions),
    logLevel: parseLogLevel(env.LOG_LEVEL),
    listenHost: envOptional(env, 'SUNDIAL_LISTEN_HOST'),
    commandTimeoutMs: envInt(env, 'SUNDIAL_COMMAND_TIMEOUT_MS', DEFAULT_COMMAND_TIMEOUT_MS, 1),
    layoutWatchMs: envInt(env, 'SUNDIAL_LAYOUT_WATCH_MS', DEFAULT_LAYOUT_WATCH_MS, 10),
    httpKeepAliveMs: envInt(
      env,
      'SUNDIAL_HTTP_KEEPALIVE_MS',
      DEFAULT_HTTP_KEEPALIVE_MS,
      1,
      MAX_HTTP_KEEPALIVE_MS,
    ),
  };
}

/** Runs a check of one variable; its refusal becomes the `invalid` refusal of the variable: `<NAME>: <message>`. */
function checked(name: string, check: () => unknown): void {
  try {
    check();
  } catch (error) {
    const { message, fix } = error as { message: string; fix: string };
    throw Object.assign(refusals.invalid(name, `${name}: ${message}`, fix), { cause: error });
  }
}

const SERVE_ENV = 'SUNDIAL_SERVE_PARTITIONS';

/**
 * SUNDIAL_SERVE_PARTITIONS: numbers and inclusive ranges, comma-separated (`0,2,5-7`); unset or blank:
 * undefined (all). Checked against `partitions` at start, so a bad list stops the process.
 */
export function parseServePartitions(text: string | undefined, partitions: number): number[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const serve = text.split(',').flatMap((item) => {
    const range = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(item);
    const [first, last] = [Number(range?.[1]), Number(range?.[2] ?? range?.[1])];
    if (!range || last < first)
      throw refusals.invalidServe(SERVE_ENV, partitions, `cannot read ${JSON.stringify(item.trim())}`);
    // A range past the last partition is refused below by its end, without being spelled out.
    if (last >= partitions) return [last];
    return Array.from({ length: last - first + 1 }, (_, i) => first + i);
  });
  return servedPartitions({ partitions, serve }, SERVE_ENV);
}
