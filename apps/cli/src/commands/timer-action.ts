import type { Timer } from '@sundial/core';
import { onlyOptions, option, requireKey } from '../args';
import type { Command } from '../command';
import { timerPath } from '../http';

/**
 * pause, resume and trigger: `POST /v1/timers/:key/<action>`, answered with the timer. An
 * `--idempotency-key` makes a retry safe (docs/spec.md §5.2).
 */
export function timerAction(action: 'pause' | 'resume' | 'trigger', done: string, summary: string): Command {
  const usage = `sundial ${action} <key> [--idempotency-key <id>] [--json]`;
  return {
    name: action,
    summary,
    usage,
    async run({ args, api, out }) {
      onlyOptions(args, ['idempotency-key'], usage);
      const key = requireKey(args, usage);
      const timer = await api.request<Timer>('POST', timerPath(key, action), {
        headers: idempotencyHeader(option(args, 'idempotency-key')),
        key,
      });
      out.result(timer, () => `${done} ${timer.key}: status ${timer.status}, version ${timer.version}`);
    },
  };
}

export function idempotencyHeader(id: string | undefined): Record<string, string> {
  return id === undefined ? {} : { 'idempotency-key': id };
}
