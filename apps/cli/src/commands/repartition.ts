import { isSundialError } from '@sundial/core';
import type { RepartitionProgress, RepartitionResult } from '@sundial/redis';
import { onlyOptions, option } from '../args';
import { CliError, EXIT, usageError } from '../cli-error';
import type { Command } from '../command';
import { table } from '../output';

const usage = 'sundial repartition --to <count> [--redis-url <url>] [--prefix <p>] [--json]';

/** The apps' defaults for REDIS_URL and SUNDIAL_PREFIX (libs/server cluster-config.ts). */
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const DEFAULT_PREFIX = 'sundial';

/**
 * Moves the timers under a prefix to another partition count while the cluster runs (docs/operations.md
 * "Changing the partition count"). It talks to Redis itself, not to the scheduler: the scheduler's
 * processes are the ones being moved under.
 */
export const repartition: Command = {
  name: 'repartition',
  summary: 'move the timers to another partition count while the cluster runs (talks to Redis)',
  usage,
  async run({ args, out, env }) {
    onlyOptions(args, ['to', 'redis-url', 'prefix'], usage);
    if (args.positionals.length)
      throw usageError(`unexpected argument "${args.positionals[0]}"`, `Usage: ${usage}`);
    const to = option(args, 'to');
    if (to === undefined) throw usageError('--to is required', `Usage: ${usage}`);
    if (!/^\d+$/.test(to))
      throw usageError(`--to ${to} is not a whole number`, 'Write the new partition count, e.g. --to 8.');
    const connection = option(args, 'redis-url') ?? (env.REDIS_URL?.trim() || DEFAULT_REDIS_URL);
    const prefix = option(args, 'prefix') ?? (env.SUNDIAL_PREFIX?.trim() || DEFAULT_PREFIX);
    // Loaded here, not at the top: the other commands need neither ioredis nor BullMQ.
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
      result = await redis.repartition({ connection, prefix, to: Number(to), onProgress });
    } catch (error) {
      if (!isSundialError(error)) throw error;
      throw new CliError(error, error.reason === 'unavailable' ? EXIT.unavailable : EXIT.refused);
    }
    out.result({ prefix, ...result }, () => summary(prefix, result));
  },
};

function summary(prefix: string, { from, to, moved, removed, left, ms }: RepartitionResult): string {
  const done = table(
    ['PREFIX', 'FROM', 'TO', 'MOVED', 'REMOVED', 'MS'],
    [[prefix, String(from), String(to), String(moved), String(removed), String(ms)]],
  );
  // what a removed partition still held is not deleted (docs/operations.md "Changing the partition count")
  const kept = left.length ? `\nLeft in Redis, still holding something: ${left.join(', ')}` : '';
  return `${done}${kept}\nRestart every process with SUNDIAL_PARTITIONS=${to}.`;
}
