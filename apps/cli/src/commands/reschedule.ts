import type { Timer } from '@sundial/core';
import { onlyOptions, option, requireKey } from '../args';
import { usageError } from '../cli-error';
import type { Command } from '../command';
import { timerPath } from '../http';
import { time } from '../output';
import { idempotencyHeader, retryText } from './timer-action';

const usage =
  'sundial reschedule <key> (--delay <5m | ms> | --at <ISO | epoch ms>) [--idempotency-key <id>] [--json]';

/** `POST /v1/timers/:key/reschedule` with `{ delay }` or `{ at }`: a new due time (docs/spec.md §5.2). */
export const reschedule: Command = {
  usage,
  async run({ args, api, out }) {
    onlyOptions(args, ['delay', 'at', 'idempotency-key'], usage);
    const key = requireKey(args, usage);
    const when = [option(args, 'delay'), option(args, 'at')];
    if (when.filter((value) => value !== undefined).length !== 1)
      throw usageError('give one of --delay or --at', `Usage: ${usage}`);
    const [delay, at] = when.map((value) => (value === undefined ? undefined : numberOrText(value)));
    const retryKey = option(args, 'idempotency-key');
    const { body: timer, replayed } = await api.write<Timer>('POST', timerPath(key, 'reschedule'), {
      body: delay === undefined ? { at } : { delay },
      headers: idempotencyHeader(retryKey),
      key,
    });
    // a retry (Idempotent-Replayed) moved nothing: the due time is the first call's, not one from now
    const state = `due ${time(timer.dueAt)}, status ${timer.status}, version ${timer.version}`;
    out.result(timer, () =>
      replayed
        ? retryText(retryKey, `rescheduled ${timer.key}, answered then: ${state}`)
        : `rescheduled ${timer.key}: ${state}`,
    );
  },
};

/** Epoch ms and a delay in ms are numbers; a duration ("5m") or an ISO instant is text. */
function numberOrText(value: string): number | string {
  return /^\d+$/.test(value) ? Number(value) : value;
}
