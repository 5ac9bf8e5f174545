import type { NextTime } from '@sundial/core';
import { onlyOptions, option, requireKey } from '../args';
import type { Command } from '../command';
import { timerPath } from '../http';
import { timesTable } from '../times';

const usage = 'sundial next <key> [--count <n>] [--json]';

export const next: Command = {
  name: 'next',
  summary: "a timer's next due times, as its policies will produce them",
  usage,
  async run({ args, api, out }) {
    onlyOptions(args, ['count'], usage);
    const key = requireKey(args, usage);
    const answer = await api.request<{ key: string; times: NextTime[] }>('GET', timerPath(key, 'next'), {
      query: { count: option(args, 'count') },
      key,
    });
    out.result(answer, () => timesTable(answer.times, `${key} will not run again on its schedule`));
  },
};
