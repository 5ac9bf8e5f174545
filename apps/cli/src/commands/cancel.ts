import { onlyOptions, option, requireKey } from '../args';
import type { Command } from '../command';
import { timerPath } from '../http';
import { idempotencyHeader } from './timer-action';

const usage = 'sundial cancel <key> [--idempotency-key <id>] [--json]';

export const cancel: Command = {
  name: 'cancel',
  summary: 'cancel a live timer (it will not run again)',
  usage,
  async run({ args, api, out }) {
    onlyOptions(args, ['idempotency-key'], usage);
    const key = requireKey(args, usage);
    const answer = await api.request<{ cancelled: true }>('DELETE', timerPath(key), {
      headers: idempotencyHeader(option(args, 'idempotency-key')),
      key,
    });
    out.result({ key, ...answer }, () => `cancelled ${key}`);
  },
};
