import type { SundialError } from '@sundial/core';
import type { RepartitionProgress, RepartitionResult } from '@sundial/redis';
import { isSundialError } from '../../../../libs/core/src/errors';
import { onlyOptions, option } from '../args';
import { CliError, type ErrorFields, EXIT, usageError } from '../cli-error';
import type { Command } from '../command';
import { table } from '../output';
import { waitBound } from '../wait-bound';

const usage = 'sundial repartition --to <count> [--redis-url <url>] [--prefix <p>] [--json]';

/** The apps' defaults for REDIS_URL and SUNDIAL_PREFIX (libs/server cluster-config.ts). */
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const DEFAULT_PREFIX = 'sundial';
/**
 * @sundial/redis's MAX_PARTITIONS and DEFAULT_COMMAND_TIMEOUT_MS, here so that a bad command line is
 * refused before that library (ioredis, BullMQ) is loaded; test/cli/repartition.test.ts checks they agree.
 */
export const MAX_PARTITIONS = 1024;
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;

/**
 * Moves the timers under a prefix to another partition count while the cluster runs (docs/operations.md
 * "Changing the partition count"). It talks to Redis itself, not to the scheduler: the scheduler's
 * processes are the ones being moved under.
 */
export const repartition: Command = {
  usage,
  async run({ args, out, env }) {
    onlyOptions(args, ['to', 'redis-url', 'prefix'], usage);
    if (args.positionals.length)
      throw usageError(`unexpected argument "${args.positionals[0]}"`, `Usage: ${usage}`);
    const to = option(args, 'to');
    if (to === undefined) throw usageError('--to is required', `Usage: ${usage}`);
    const connection = option(args, 'redis-url') ?? (env.REDIS_URL?.trim() || DEFAULT_REDIS_URL);
    const prefix = option(args, 'prefix') ?? (env.SUNDIAL_PREFIX?.trim() || DEFAULT_PREFIX);
    // The command line is checked whole before the Redis library is loaded: a typo is refused at once.
    // What the apps take as SUNDIAL_PARTITIONS; a count out of it (-3 as 0) is repartition()'s refusal.
    if (!/^-?\d+$/.test(to)) {
      throw usageError(
        `--to ${to} is not a whole number from 1 to ${MAX_PARTITIONS}`,
        `Write the new partition count, a whole number from 1 to ${MAX_PARTITIONS}, e.g. --to 8.`,
      );
    }
    // the apps' bound on a Redis reply (docs/spec.md §5.4), read as they read it, beside REDIS_URL
    const commandTimeoutMs = waitBound(env, 'SUNDIAL_COMMAND_TIMEOUT_MS', DEFAULT_COMMAND_TIMEOUT_MS);
    // Loaded here, not at the top: only this command needs ioredis and BullMQ, and the path mapping
    // that lets the compiled libs find each other as @sundial/* (the CLI's own imports are relative).
    await import('../../../../libs/server/src/register-paths');
    const redis = await import('@sundial/redis');
    // which Redis and prefix it works on, the passwords left out (not with --json: stderr is then
    // the refusal's JSON alone)
    if (!out.json) out.progress(`repartition: prefix ${prefix} on Redis ${redis.urlForDisplay(connection)}`);
    let lastPhase = '';
    const onProgress = ({ from, to, phase, moved, busy }: RepartitionProgress) => {
      // one line per phase, and one per try while keys wait for their runs
      if (phase === lastPhase && phase !== 'waiting') return;
      lastPhase = phase;
      out.progress(`repartition ${from} → ${to}: ${phase}, ${moved} moved, ${busy} waiting for their run`);
    };
    let result: RepartitionResult;
    try {
      const options = { connection, prefix, to: Number(to), onProgress, commandTimeoutMs };
      result = await redis.repartition(options);
    } catch (error) {
      if (!isSundialError(error)) throw error;
      if (error.reason !== 'unavailable') throw new CliError(error, EXIT.refused);
      throw new CliError(unavailable(error, commandTimeoutMs), EXIT.unavailable);
    }
    out.result({ prefix, ...result }, () => summary(prefix, result));
  },
};

/** Redis away: the library's refusal, its fix saying how to resume and what bounds the wait. */
function unavailable(error: SundialError, commandTimeoutMs: number): ErrorFields {
  return {
    ...error.toJSON(),
    fix: `${error.fix} The same command resumes a repartition cut off; each Redis reply is waited for SUNDIAL_COMMAND_TIMEOUT_MS (${commandTimeoutMs} ms).`,
  };
}

function summary(prefix: string, { from, to, moved, removed, left, ms }: RepartitionResult): string {
  const done = table(
    ['PREFIX', 'FROM', 'TO', 'MOVED', 'REMOVED', 'MS'],
    [[prefix, String(from), String(to), String(moved), String(removed), String(ms)]],
  );
  // what a removed partition still held is not deleted (docs/operations.md "Changing the partition count")
  const kept = left.length ? `\nLeft in Redis, still holding something: ${left.join(', ')}` : '';
  return `${done}${kept}\nRestart every process with SUNDIAL_PARTITIONS=${to}.`;
}
