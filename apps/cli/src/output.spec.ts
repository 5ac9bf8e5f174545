import type { Timer } from '@sundial/core';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { main } from './main';
import { schedule, table } from './output';
import { timerText } from './timer-text';

/** `sundial list` / `get` write an interval as the operator UI does: "every 1 h", not "every 3600000 ms". */
describe('cli output: schedule', () => {
  const timer = (fields: Partial<Timer>) => ({ kind: 'interval', ...fields }) as Timer;

  it.each([
    [300, 'every 300 ms'],
    [30_000, 'every 30 s'],
    [90_000, 'every 1.5 min'],
    [3_600_000, 'every 1 h'],
    [86_400_000 * 14, 'every 14 d'],
  ])('everyMs %d reads %s', (everyMs, text) => {
    expect(schedule(timer({ everyMs }))).toBe(text);
  });

  it('a cron names its zone; a one-shot is once', () => {
    expect(schedule(timer({ kind: 'cron', cron: '0 7 * * 1-5', tz: 'America/Toronto' }))).toBe(
      'cron 0 7 * * 1-5 (America/Toronto)',
    );
    expect(schedule(timer({ kind: 'once' }))).toBe('once');
  });
});

/**
 * Text from the API (a handler's error message, a ledger entry's, a refusal's) is printed as text: a
 * terminal escape in it is shown escaped, not acted on; a newline does not start a forged line.
 */
describe('cli output: control characters', () => {
  const hostile = 'boom\u001b[2J\u001b]0;pwned\u0007\nkey: forged\r\u202eexe.txt\u009b31m';
  /** what a terminal would act on, a newline aside (checked on its own) */
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const ACTED_ON = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/;
  const escaped = 'boom\\u001b[2J\\u001b]0;pwned\\u0007\\nkey: forged\\r\\u202eexe.txt\\u009b31m';

  it('a timer whose last error carries escapes and newlines prints them escaped, on its own line', () => {
    const text = timerText({
      key: 'k',
      status: 'failed',
      handler: 'h',
      runCount: 1,
      version: 1,
      id: '1p0',
      last: { status: 'failed', error: { reason: 'error', message: hostile } },
    } as Timer);
    expect(text).toContain(escaped);
    expect(text).not.toMatch(ACTED_ON);
    expect(text.split('\n').filter((line) => line.startsWith('key:'))).toHaveLength(1);
  });

  it('a table cell is printed escaped and the columns still line up', () => {
    const text = table(['A', 'B'], [[hostile, 'x']]);
    expect(text.split('\n')).toEqual([`A${' '.repeat(escaped.length + 1)}B`, `${escaped}  x`]);
  });

  it('a table of 200,000 rows (list --all over a large installation) is printed, columns lined up', () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => [`k${i}`, 'pending']);
    const lines = table(['KEY', 'STATUS'], rows).split('\n');
    expect(lines).toHaveLength(200_001);
    expect(lines[1]).toBe(`k0${' '.repeat('k199999'.length - 2)}  pending`);
  });

  it('a refusal printed on stderr has its message and fix escaped', async () => {
    const server = createServer((_request, response) => {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { reason: 'invalid', message: hostile, fix: `do\u001b[8m it` } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect(await main(['get', 'k'], { SUNDIAL_URL: url })).toBe(1);
      const printed = String(stderr.mock.lastCall?.[0]);
      expect(printed).toContain(escaped);
      expect(printed).toContain('fix: do\\u001b[8m it\n');
      expect(printed).not.toMatch(ACTED_ON);
    } finally {
      stderr.mockRestore();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
