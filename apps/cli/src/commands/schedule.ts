import type { Timer } from '@sundial/core';
import { option } from '../args';
import { batchSummary } from '../batch-summary';
import type { Command } from '../command';
import { namingFlags } from '../flag-refusal';
import { table } from '../output';
import { specsFromArgs } from '../spec-from-args';
import { TIMER_HEADERS, timerRow } from '../timer-rows';
import { timerText } from '../timer-text';
import { idempotencyHeader, readTimer, retryText } from './timer-action';

const usage =
  'sundial schedule [--file spec.json | --file batch.json (an array: all or none)] --key <key> --handler <name> (--delay 5s | --at <ISO> | --every 30s | --cron "<expr>" --tz <zone>) [--payload <json>] [--<any TimerSpec field> <value>] [--idempotency-key <id>] [--json]';

export const schedule: Command = {
  usage,
  async run({ args, api, out }) {
    const spec = specsFromArgs(args, usage);
    if (Array.isArray(spec)) {
      // A batch (docs/spec.md §5.2): scheduled all or none; a refusal names its spec (specs[i].<field>).
      const retryKey = option(args, 'idempotency-key');
      const { body: batch, replayed } = await namingFlags(args, () =>
        api.write<{ items: Timer[] }>('POST', 'timers', { body: spec, headers: idempotencyHeader(retryKey) }),
      );
      // A retry with the same --idempotency-key is answered the first call's timers (Idempotent-Replayed)
      // and schedules nothing: it says so, and --json adds `replayed: true` to the API's answer.
      const n = batch.items.length;
      const count = replayed ? retryText(retryKey, `scheduled ${n} timer(s)`) : batchSummary(batch.items);
      out.result(replayed ? { ...batch, replayed } : batch, () =>
        n ? `${table(TIMER_HEADERS, batch.items.map(timerRow))}\n${count}` : count,
      );
      return;
    }
    const key = typeof spec.key === 'string' ? spec.key : undefined;
    const before = key === undefined ? undefined : await readTimer(api, key);
    const retryKey = option(args, 'idempotency-key');
    const { body: timer, replayed } = await namingFlags(args, () =>
      api.write<Timer>('POST', 'timers', { body: spec, headers: idempotencyHeader(retryKey), key }),
    );
    // `--if-exists keep`, or a retry with the same --idempotency-key: the API answers with the timer
    // that was there, and nothing was scheduled
    const kept = before?.id === timer.id && before.version === timer.version;
    // `--if-exists keep` on a key cancelled since: the API answers the cancelled timer (its tombstone,
    // docs/spec.md §3.1), which the read before could not see (GET has no row for it)
    const what =
      timer.status === 'cancelled'
        ? `${timer.key} was cancelled: nothing scheduled (--if-exists keep answers a cancelled key with its cancelled timer, for 7 days by default); --if-exists replace schedules it again`
        : kept
          ? `${timer.key} was already scheduled: nothing changed`
          : replayed
            ? // the first call's timer, cancelled or replaced since: the retry scheduled nothing either
              retryText(retryKey, `scheduled ${timer.key}; the key holds another timer or none now`)
            : 'scheduled';
    out.result(timer, () => `${what}\n${timerText(timer)}`);
  },
};
