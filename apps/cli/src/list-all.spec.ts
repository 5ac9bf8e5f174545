import { waitFor } from '@sundial/testing/harness';
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from './args';
import { list } from './commands/list';
import type { RequestOptions, SundialHttp } from './http';
import { main } from './main';
import { type AnswerStream, createOutput } from './output';

/** Timers of every schedule, keys of several widths (the text table lines them up over every page). */
const TIMERS = Array.from({ length: 7 }, (_, n) => ({
  key: `t${'x'.repeat(n * 3)}${n}`,
  kind: n % 3 === 0 ? 'cron' : n % 3 === 1 ? 'interval' : 'once',
  status: n % 2 ? 'paused' : 'pending',
  handler: `h${n}`,
  dueAt: 1_800_000_000_000 + n * 60_000,
  runCount: n * 11,
  last: n === 4 ? { status: 'failed', error: { reason: 'handler-error' } } : null,
  ...(n % 3 === 0 ? { cron: '0 9 * * *', tz: 'Europe/Berlin' } : n % 3 === 1 ? { everyMs: 90_000 } : {}),
  payload: { n, text: 'a "quoted"\nline' },
}));

/**
 * `sundial list --all` printed every page only after the last (558 MB held at 207k timers): it now
 * prints each page as it comes, the same bytes as one answer with every timer (docs/spec.md §5.3).
 */
describe('sundial list --all: each page printed as it comes, the output as one page would print it', () => {
  let server: Server;
  let url: string;
  /** what happened, in order: `fetch <cursor>` as a page is asked for, `write` as stdout is written */
  const events: string[] = [];
  let timers = TIMERS;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const query = new URL(request.url!, 'http://x').searchParams;
      const from = Number(query.get('cursor') ?? 0);
      const limit = Number(query.get('limit') ?? 100);
      events.push(`fetch ${from}`);
      const next = from + limit < timers.length ? String(from + limit) : null;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ items: timers.slice(from, from + limit), nextCursor: next }));
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((closed) => server.close(() => closed())));
  afterEach(() => jest.restoreAllMocks());

  /** stdout of `sundial list ...argv`, with the events it made. */
  async function run(...argv: string[]): Promise<{ printed: string; order: string[] }> {
    events.length = 0;
    const parts: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      parts.push(String(chunk));
      events.push('write');
      return true;
    });
    jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(await main(['list', ...argv], { SUNDIAL_URL: url })).toBe(0);
    jest.restoreAllMocks();
    return { printed: parts.join(''), order: [...events] };
  }

  it('--json: the bytes of one answer, valid JSON, each page written before the next is asked for', async () => {
    timers = TIMERS;
    const one = await run('--json', '--limit', '100');
    expect(one.printed).toBe(`${JSON.stringify({ items: TIMERS, nextCursor: null }, null, 2)}\n`);
    const paged = await run('--all', '--json', '--limit', '3');
    expect(paged.printed).toBe(one.printed);
    expect(JSON.parse(paged.printed)).toEqual({ items: TIMERS, nextCursor: null });
    // Three pages (3, 3, 1): the first page's timers are out before the second page is asked for.
    expect(paged.order.filter((event) => event.startsWith('fetch'))).toEqual([
      'fetch 0',
      'fetch 3',
      'fetch 6',
    ]);
    expect(paged.order.indexOf('write', paged.order.indexOf('fetch 0'))).toBeLessThan(
      paged.order.indexOf('fetch 3'),
    );
    expect(paged.order.lastIndexOf('write')).toBeGreaterThan(paged.order.indexOf('fetch 6'));
  });

  it('--json: the next page is asked for once stdout has taken the last, however slow its reader', async () => {
    // A pipe's reader that does not keep up (`| less`): every write fills the buffer, until 'drain'.
    const stdout = Object.assign(new EventEmitter(), {
      parts: [] as string[],
      write(text: string) {
        this.parts.push(text);
        return false;
      },
    }) satisfies AnswerStream;
    const asked: string[] = [];
    const api: SundialHttp = {
      url: 'http://in-memory',
      now: () => Promise.resolve(Date.now()),
      request<T>(_method: string, _path: string, options?: RequestOptions) {
        const from = Number(options?.query?.cursor ?? 0);
        asked.push(`page ${from}`);
        const nextCursor = from + 3 < TIMERS.length ? String(from + 3) : null;
        return Promise.resolve({ items: TIMERS.slice(from, from + 3), nextCursor } as T);
      },
      write: () => Promise.reject(new Error('list writes nothing')),
    };
    const args = parseArgs(['--all', '--json', '--limit', '3']);
    const out = createOutput(true, stdout, () => undefined);
    const running = list.run({ args, api, out, env: {} });
    // Each page is asked for only once what came before was taken: it held every page as it came.
    const pages = ['page 0', 'page 3', 'page 6'];
    for (let written = 1; written <= 5; written++) {
      await waitFor(() => stdout.parts.length >= written, { timeoutMs: 5000, what: `part ${written}` }); // deadline
      expect([stdout.parts.length, asked]).toEqual([written, pages.slice(0, Math.min(written - 1, 3))]);
      stdout.emit('drain');
    }
    await running;
    expect(stdout.parts.join('')).toBe(`${JSON.stringify({ items: TIMERS, nextCursor: null }, null, 2)}\n`);
  });

  it('text: one table over every page, columns as wide as the widest cell of any page', async () => {
    timers = TIMERS;
    const one = await run('--limit', '100');
    expect(one.printed).toMatch(/^KEY +STATUS .*\n.*7 timer\(s\)\n$/s);
    expect((await run('--all', '--limit', '2')).printed).toBe(one.printed);
  });

  it('no timers: the same as one empty page, in JSON and text', async () => {
    timers = [];
    expect((await run('--all', '--json', '--limit', '2')).printed).toBe((await run('--json')).printed);
    expect((await run('--all', '--limit', '2')).printed).toBe('no timers\n');
  });
});
