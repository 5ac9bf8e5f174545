import { onlyOptions, option, requireKey } from '../args';
import { usageError } from '../cli-error';
import type { Command } from '../command';
import { timerPath } from '../http';
import { idempotencyHeader, retryText } from './timer-action';

const usage = 'sundial backfill <key> --from <ISO> --to <ISO> [--idempotency-key <id>] [--json]';

export const backfill: Command = {
  usage,
  async run({ args, api, out }) {
    onlyOptions(args, ['from', 'to', 'idempotency-key'], usage);
    const key = requireKey(args, usage);
    const [from, to] = [option(args, 'from'), option(args, 'to')];
    if (from === undefined || to === undefined)
      throw usageError('--from and --to are required', `Usage: ${usage}`);
    const retryKey = option(args, 'idempotency-key');
    const path = timerPath(key, 'backfill');
    const { body: answer, replayed } = await api.write<{ key: string; slots: number }>('POST', path, {
      body: { from, to },
      headers: idempotencyHeader(retryKey),
      key,
    });
    // a retry (Idempotent-Replayed) queued no slot again: --json says so beside the first answer
    if (replayed) {
      const first = `queued the backfill of ${key}: ${answer.slots} slot(s) to run`;
      return out.result({ ...answer, replayed }, () => retryText(retryKey, first));
    }
    out.result(answer, () => `backfill of ${key}: ${answer.slots} slot(s) to run`);
  },
};
