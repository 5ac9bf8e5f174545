import type { NextTime } from '@sundial/core';
import { onlyOptions, option, requireKey } from '../args';
import { keyArgument } from '../cli-fix';
import type { Command } from '../command';
import { type SundialHttp, timerPath } from '../http';
import { timesTable } from '../times';
import { readTimer } from './timer-action';

const usage = 'sundial next <key> [--count <n>] [--json]';

export const next: Command = {
  usage,
  async run({ args, api, out }) {
    onlyOptions(args, ['count'], usage);
    const key = requireKey(args, usage);
    const answer = await api.request<{ key: string; times: NextTime[] }>('GET', timerPath(key, 'next'), {
      query: { count: option(args, 'count') },
      key,
    });
    const none = out.json || answer.times.length ? '' : await noTimes(api, key);
    out.result(answer, () => timesTable(answer.times, none));
  },
};

/**
 * Why a timer has no due time (docs/spec.md §3.9: none while paused or finished): a paused one runs
 * again once resumed, which "will not run again" would deny.
 */
async function noTimes(api: SundialHttp, key: string): Promise<string> {
  const timer = await readTimer(api, key);
  if (timer?.status === 'paused') {
    return `${key} is paused: no due times until sundial resume ${keyArgument(key)}`;
  }
  return `${key} will not run again on its schedule${timer ? ` (status ${timer.status})` : ''}`;
}
