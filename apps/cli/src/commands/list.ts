import type { ListResult, Timer } from '@sundial/core';
import { flag, onlyOptions, option, type ParsedArgs } from '../args';
import { usageError } from '../cli-error';
import { optionArgument } from '../cli-fix';
import type { Command } from '../command';
import type { SundialHttp } from '../http';
import { type Output, TableRows } from '../output';
import { TIMER_HEADERS, timerRow } from '../timer-rows';

const usage =
  'sundial list [--prefix <p>] [--status <s>] [--due-before <ISO | epoch ms | +1h | -30m>] [--limit <n>] [--cursor <c>] [--all] [--json]';

export const list: Command = {
  usage,
  async run({ args, api, out }) {
    onlyOptions(args, ['prefix', 'status', 'due-before', 'limit', 'cursor', 'all'], usage);
    const query = {
      prefix: option(args, 'prefix'),
      status: option(args, 'status'),
      dueBefore: await dueBefore(api, option(args, 'due-before')),
      limit: option(args, 'limit'),
    };
    if (flag(args, 'all')) return out.json ? allPagesJson(api, query, out) : allPagesText(api, query, out);
    const result = await page(api, query, option(args, 'cursor'));
    out.result(result, () => text(result, args, query.dueBefore));
  },
};

type Query = Record<string, string | undefined>;

function page(api: SundialHttp, query: Query, cursor: string | undefined): Promise<ListResult> {
  return api.request<ListResult>('GET', 'timers', { query: { ...query, cursor } });
}

/**
 * Follows the cursors to the end: one request per page, each page handed on as it comes, the next one
 * asked for once `take` has settled (the page written out).
 */
async function eachPage(
  api: SundialHttp,
  query: Query,
  take: (items: Timer[]) => Promise<void> | void,
): Promise<void> {
  let cursor: string | undefined;
  do {
    const result = await page(api, query, cursor);
    await take(result.items);
    cursor = result.nextCursor ?? undefined;
  } while (cursor);
}

/**
 * `--all --json`: `{ items: [every page's], nextCursor: null }` byte for byte as one answer would print,
 * each page printed as it comes (items indented as JSON.stringify nests them), and the next asked for
 * once stdout has taken it: at most about a page is held, however slowly the reader reads.
 */
async function allPagesJson(api: SundialHttp, query: Query, out: Output): Promise<void> {
  let count = 0;
  await out.part('{\n  "items": [');
  await eachPage(api, query, async (items) => {
    if (items.length === 0) return;
    const nested = items.map((item) => JSON.stringify(item, null, 2).replace(/^/gm, '    '));
    const separator = count === 0 ? '\n' : ',\n';
    count += items.length;
    await out.part(`${separator}${nested.join(',\n')}`);
  });
  await out.part(`${count === 0 ? '' : '\n  '}],\n  "nextCursor": null\n}\n`);
}

/**
 * `--all` as text: one table, its columns as wide as the widest cell of every page, so the rows are
 * kept until the last page, but as their printed cells, not the timers read (558 MB at 200,000).
 */
async function allPagesText(api: SundialHttp, query: Query, out: Output): Promise<void> {
  const rows = new TableRows(TIMER_HEADERS);
  await eachPage(api, query, (items) => items.forEach((timer) => rows.add(timerRow(timer))));
  if (rows.count === 0) {
    await out.part('no timers\n');
    return;
  }
  let lines: string[] = [];
  for (const line of rows.lines()) {
    lines.push(line);
    if (lines.length < 1000) continue;
    await out.part(`${lines.join('\n')}\n`);
    lines = [];
  }
  await out.part(`${[...lines, `${rows.count} timer(s)`].join('\n')}\n`);
}

/** A page as a table; `dueBefore`: the instant --due-before was resolved to (epoch ms), if given. */
function text({ items, nextCursor }: ListResult, args: ParsedArgs, dueBefore: string | undefined): string {
  const rows = new TableRows(TIMER_HEADERS);
  for (const timer of items) rows.add(timerRow(timer));
  // An empty page with a cursor is a stretch read without a match (a page reads a bounded stretch when
  // filtering, docs/spec.md §3.6), not an empty listing: it said "no timers" above its more: line.
  const none = nextCursor
    ? 'no match in this stretch: the scheduler reads at most 10,000 timers a page when filtering; more follow'
    : 'no timers';
  const lines = items.length
    ? [...rows.lines(), `${items.length} timer(s)${nextCursor ? ' on this page' : ''}`]
    : [none];
  if (nextCursor) {
    // The next page of this listing: a relative --due-before (+1h) as the instant it meant here, since
    // run later it would mean another bound, and the cursor goes on in this one's due order.
    const resolved = (name: string, value: string) =>
      name === 'due-before' && /^[+-]/.test(value) ? new Date(Number(dueBefore)).toISOString() : value;
    const rest = [...args.options]
      .filter(([name]) => name !== 'cursor')
      .map(([n, v]) => (v === true ? `--${n}` : optionArgument(n, resolved(n, v))));
    lines.push(`more: sundial list ${[...rest, `--cursor ${nextCursor}`].join(' ')}`);
  }
  return lines.join('\n');
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `+30m`, `+1h`, `+1d` from now, `-30m` before it (overdue by more than that), now being the
 * scheduler's (`Sundial-Now`: due times are on its clock, not this host's), resolved once for every
 * page; anything else (ISO, epoch ms) goes to the scheduler as written.
 */
async function dueBefore(api: SundialHttp, value: string | undefined): Promise<string | undefined> {
  if (value === undefined || !/^[+-]/.test(value)) return value;
  const match = /^([+-])(\d+)([smhd])$/.exec(value);
  if (!match)
    throw usageError(
      `--due-before ${value} is not +<n>s|m|h|d or -<n>s|m|h|d`,
      'Write e.g. --due-before +1h (or -30m: overdue by more than 30 min), or an ISO instant.',
    );
  const sign = match[1] === '-' ? -1 : 1;
  return String((await api.now()) + sign * Number(match[2]) * UNITS[match[3]]);
}
