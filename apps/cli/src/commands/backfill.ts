import { onlyOptions, option, requireKey } from '../args';
import { usageError } from '../cli-error';
import type { Command } from '../command';
import { timerPath } from '../http';
import { idempotencyHeader } from './timer-action';

const usage = 'sundial backfill <key> --from <ISO> --to <ISO> [--idempotency-key <id>] [--json]';

export const backfill: Command = {
  usage,
  async run({ args, api, out }) {
    onlyOptions(args, ['from', 'to', 'idempotency-key'], usage);
    const key = requireKey(args, usage);
    const [from, to] = [option(args, 'from'), option(args, 'to')];
    if (from === undefined || to === undefined)
      throw usageError('--from and --to are required', `Usage: ${usage}`);
    const answer = await api.request<{ key: string; slots: number }>('POST', timerPath(key, 'backfill'), {
      body: { from, to },
      headers: idempotencyHeader(option(args, 'idempotency-key')),
      key,
    });
    out.result(answer, () => `backfill of ${key}: ${answer.slots} slot(s) to run`);
  },
};
