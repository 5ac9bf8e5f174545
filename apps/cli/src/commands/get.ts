import type { Timer } from '@sundial/core';
import { flag, onlyOptions, requireKey } from '../args';
import type { Command } from '../command';
import { timerPath } from '../http';
import { timerText } from '../timer-text';

const usage = 'sundial get <key> [--show-payload] [--json]';

export const get: Command = {
  usage,
  async run({ args, api, out }) {
    onlyOptions(args, ['show-payload'], usage);
    const key = requireKey(args, usage);
    const timer = await api.request<Timer>('GET', timerPath(key), { key });
    out.result(timer, () => timerText(timer, flag(args, 'show-payload')));
  },
};
