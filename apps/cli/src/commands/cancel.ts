import { flag, onlyOptions, option, requireKey } from '../args';
import { usageError } from '../cli-error';
import type { Command, CommandInput } from '../command';
import { timerPath } from '../http';
import { idempotencyHeader } from './timer-action';

const usage = 'sundial cancel <key> | --prefix <scope> | --all [--idempotency-key <id>] [--json]';

/** How to say which timers: one key, a non-empty scope, or every timer, on purpose (docs/spec.md §5.6). */
const WHICH_FIX = `Name a key, --prefix <scope> (e.g. --prefix invoice:42:), or --all to cancel every timer on purpose. Usage: ${usage}`;

export const cancel: Command = {
  name: 'cancel',
  summary: 'cancel a live timer, every timer of a scope (--prefix) or every timer (--all)',
  usage,
  async run(input) {
    const { args } = input;
    onlyOptions(args, ['idempotency-key', 'prefix', 'all'], usage);
    const prefix = option(args, 'prefix');
    const all = flag(args, 'all');
    if (prefix === undefined && !all) return cancelOne(input);
    if (args.positionals.length || (prefix !== undefined && all)) {
      throw usageError('give one of a key, --prefix or --all', WHICH_FIX);
    }
    if (prefix === '') throw usageError('--prefix is empty (it does not mean all)', WHICH_FIX);
    await cancelMany(input, prefix);
  },
};

async function cancelOne({ args, api, out }: CommandInput): Promise<void> {
  const key = requireKey(args, usage);
  const answer = await api.request<{ cancelled: true }>('DELETE', timerPath(key), {
    headers: idempotencyHeader(option(args, 'idempotency-key')),
    key,
  });
  out.result({ key, ...answer }, () => `cancelled ${key}`);
}

/** `DELETE /v1/timers?prefix=<scope>`, or `?all=true` without a scope. */
async function cancelMany({ args, api, out }: CommandInput, prefix: string | undefined): Promise<void> {
  const answer = await api.request<{ cancelled: number }>('DELETE', 'timers', {
    query: prefix === undefined ? { all: 'true' } : { prefix },
    headers: idempotencyHeader(option(args, 'idempotency-key')),
  });
  const which = prefix === undefined ? 'every timer' : `the timers of ${prefix}`;
  out.result(answer, () => `cancelled ${answer.cancelled} timer(s): ${which}`);
}
