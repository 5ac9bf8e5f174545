import type { Timer } from '@sundial/core';
import { option } from '../args';
import type { Command } from '../command';
import { specFromArgs } from '../spec-from-args';
import { timerText } from '../timer-text';
import { idempotencyHeader } from './timer-action';

const usage =
  'sundial schedule [--file spec.json] --key <key> --handler <name> (--delay 5s | --at <ISO> | --every 30s | --cron "<expr>" --tz <zone>) [--payload <json>] [--<any TimerSpec field> <value>] [--idempotency-key <id>] [--json]';

export const schedule: Command = {
  name: 'schedule',
  summary: 'schedule a timer from flags and/or a JSON file (POST /v1/timers)',
  usage,
  async run({ args, api, out }) {
    const spec = specFromArgs(args, usage);
    const timer = await api.request<Timer>('POST', 'timers', {
      body: spec,
      headers: idempotencyHeader(option(args, 'idempotency-key')),
      ...(typeof spec.key === 'string' && { key: spec.key }),
    });
    out.result(timer, () => `scheduled\n${timerText(timer)}`);
  },
};
