import type { ListResult, Timer } from '@sundial/core';
import { flag, onlyOptions, option, type ParsedArgs } from '../args';
import { usageError } from '../cli-error';
import { shellWord } from '../cli-fix';
import type { Command } from '../command';
import type { SundialHttp } from '../http';
import { lastRun, schedule, table, time } from '../output';

const usage =
  'sundial list [--prefix <p>] [--status <s>] [--due-before <ISO | epoch ms | +1h>] [--limit <n>] [--cursor <c>] [--all] [--json]';

export const list: Command = {
  name: 'list',
  summary: 'list timers by key (by due with --due-before), a page at a time (--all: every page)',
  usage,
  async run({ args, api, out }) {
    onlyOptions(args, ['prefix', 'status', 'due-before', 'limit', 'cursor', 'all'], usage);
    const query = {
      prefix: option(args, 'prefix'),
      status: option(args, 'status'),
      dueBefore: dueBefore(option(args, 'due-before')),
      limit: option(args, 'limit'),
    };
    const result = flag(args, 'all')
      ? await allPages(api, query)
      : await page(api, query, option(args, 'cursor'));
    out.result(result, () => text(result, args));
  },
};

type Query = Record<string, string | undefined>;

function page(api: SundialHttp, query: Query, cursor: string | undefined): Promise<ListResult> {
  return api.request<ListResult>('GET', 'timers', { query: { ...query, cursor } });
}

/** Follows the cursors to the end: one request per page. */
async function allPages(api: SundialHttp, query: Query): Promise<ListResult> {
  const items: Timer[] = [];
  let cursor: string | undefined;
  do {
    const result = await page(api, query, cursor);
    items.push(...result.items);
    cursor = result.nextCursor ?? undefined;
  } while (cursor);
  return { items, nextCursor: null };
}

function text({ items, nextCursor }: ListResult, args: ParsedArgs): string {
  const rows = items.map((t) => [
    t.key,
    t.status,
    schedule(t),
    t.handler,
    time(t.dueAt),
    String(t.runCount),
    lastRun(t),
  ]);
  const lines = items.length
    ? [
        table(['KEY', 'STATUS', 'SCHEDULE', 'HANDLER', 'DUE', 'RUNS', 'LAST'], rows),
        `${items.length} timer(s)${nextCursor ? ' on this page' : ''}`,
      ]
    : ['no timers'];
  if (nextCursor) {
    const rest = [...args.options]
      .filter(([name]) => name !== 'cursor')
      .map(([n, v]) => (v === true ? `--${n}` : `--${n} ${shellWord(v)}`));
    lines.push(`more: sundial list ${[...rest, `--cursor ${nextCursor}`].join(' ')}`);
  }
  return lines.join('\n');
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `+30m`, `+1h`, `+1d` from now; anything else (ISO, epoch ms) goes to the scheduler as written. */
function dueBefore(value: string | undefined): string | undefined {
  if (value === undefined || !value.startsWith('+')) return value;
  const match = /^\+(\d+)([smhd])$/.exec(value);
  if (!match)
    throw usageError(
      `--due-before ${value} is not +<n>s|m|h|d`,
      'Write e.g. --due-before +1h, or an ISO instant.',
    );
  return String(Date.now() + Number(match[1]) * UNITS[match[2]]);
}
