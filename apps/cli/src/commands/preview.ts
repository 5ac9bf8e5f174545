import type { Preview } from '@sundial/core';
import { option } from '../args';
import { usageError } from '../cli-error';
import type { Command } from '../command';
import { namingFlags } from '../flag-refusal';
import { specFromArgs } from '../spec-from-args';
import { timesTable } from '../times';

const usage = 'sundial preview [--file spec.json] [--<TimerSpec field> <value> ...] [--count <n>] [--json]';

export const preview: Command = {
  usage,
  async run({ args, api, out }) {
    // a flag of schedule's (CLI_OPTIONS), not preview's: it was taken and dropped, nothing to retry safely
    if (option(args, 'idempotency-key') !== undefined) {
      throw usageError(
        '--idempotency-key: a preview writes nothing, so it has no retry to make safe',
        `Leave out --idempotency-key. Usage: ${usage}`,
      );
    }
    const spec = specFromArgs(args, usage);
    const answer = await namingFlags(args, () =>
      api.request<Preview>('POST', 'preview', { body: spec, query: { count: option(args, 'count') } }),
    );
    out.result(answer, () =>
      [`valid: ${JSON.stringify(answer.spec)}`, timesTable(answer.next, 'no due times')].join('\n'),
    );
  },
};
