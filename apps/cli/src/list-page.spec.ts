import { EventEmitter } from 'node:events';
import { parseArgs } from './args';
import { list } from './commands/list';
import type { SundialHttp } from './http';
import { type AnswerStream, createOutput } from './output';

/** The text `sundial list ...argv` prints when the scheduler answers `answer`. */
async function printed(answer: object, ...argv: string[]): Promise<string> {
  const parts: string[] = [];
  const stdout = Object.assign(new EventEmitter(), {
    write: (text: string) => parts.push(text) > 0,
  }) satisfies AnswerStream;
  const api: SundialHttp = {
    url: 'http://in-memory',
    now: () => Promise.resolve(Date.now()),
    request: <T>() => Promise.resolve(answer as T),
    write: () => Promise.reject(new Error('list writes nothing')),
  };
  await list.run({ args: parseArgs(argv), api, out: createOutput(false, stdout, () => undefined), env: {} });
  return parts.join('');
}

describe('sundial list: a page with no timer', () => {
  // The scheduler reads a bounded stretch a page when filtering (docs/spec.md §3.6): an empty page may have
  // more after it. It printed "no timers" above the more: line, as if the listing were empty.
  it('with a cursor says none matched in this stretch and that more follow', async () => {
    const text = await printed({ items: [], nextCursor: 'c1' }, '--status', 'failed');
    expect(text).toBe(
      'no match in this stretch: the scheduler reads at most 10,000 timers a page when filtering; more follow\n' +
        'more: sundial list --status failed --cursor c1\n',
    );
  });

  it('without one says there are no timers', async () => {
    expect(await printed({ items: [], nextCursor: null })).toBe('no timers\n');
  });
});
