import type { Timer } from '@sundial/core';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from './args';
import { CliError } from './cli-error';
import { flagFieldRefusal } from './flag-refusal';
import { specFromArgs, specsFromArgs } from './spec-from-args';
import { timerText } from './timer-text';

describe('sundial CLI: command line to TimerSpec', () => {
  const usage = 'sundial schedule ...';

  it('maps --kebab-case options to spec fields; JSON-looking values are JSON, the rest text', () => {
    const args = parseArgs([
      '--key',
      '42',
      '--handler=log',
      '--delay',
      '5s',
      '--max-runs',
      '3',
      '--remove-on-complete',
      'false',
      '--payload',
      '{"a":[1,2]}',
      '--cron',
      '0 7 * * 1-5',
      '--json',
    ]);
    expect(specFromArgs(args, usage)).toEqual({
      key: '42',
      handler: 'log',
      delay: '5s',
      maxRuns: 3,
      removeOnComplete: false,
      payload: { a: [1, 2] },
      cron: '0 7 * * 1-5',
    });
  });

  it("reads a --file array as a batch for schedule, each object given the options' fields, and refuses it elsewhere", () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sundial-spec-')), 'batch.json');
    writeFileSync(file, JSON.stringify([{ key: 'a', delay: '1h' }, 'not a spec', { key: 'b', every: '1m' }]));
    const args = parseArgs(['--file', file, '--handler', 'log', '--if-exists', 'keep']);
    expect(specsFromArgs(args, usage)).toEqual([
      { key: 'a', delay: '1h', handler: 'log', ifExists: 'keep' },
      'not a spec',
      { key: 'b', every: '1m', handler: 'log', ifExists: 'keep' },
    ]);
    expect(() => specFromArgs(args, usage)).toThrow(
      expect.objectContaining({
        reason: 'usage',
        message: `${file} holds an array: this command takes one spec`,
      }),
    );
  });

  // `--file -` with nothing piped in said "- is not JSON: Unexpected end of JSON input".
  it('refuses an empty --file (or stdin) saying it is empty and what it should hold', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sundial-spec-')), 'empty.json');
    for (const text of ['', ' \n']) {
      writeFileSync(file, text);
      expect(() => specsFromArgs(parseArgs(['--file', file]), usage)).toThrow(
        expect.objectContaining({
          reason: 'usage',
          message: `${file} is empty: there is no spec in it`,
          fix: 'Give --file a JSON TimerSpec, e.g. {"key":"a","handler":"log","delay":"5s"}, or an array of them (--file - reads them from stdin: pipe them in).',
        }),
      );
    }
  });

  // The scheduler refuses an unknown field by its camelCase name; given as a flag, the fix named the field.
  it('names the flag, not the field, in the fix of a refused unknown field a flag set', () => {
    const refused = (field: string, fix: string) =>
      new CliError(
        { reason: 'invalid', field, message: `the timer spec has an unknown field "${field}"`, fix },
        1,
        400,
      );
    const cases: [string[], string, string][] = [
      [['--max-run', '3'], 'maxRun', 'Did you mean --max-runs? Rename the flag --max-run to --max-runs.'],
      [
        ['--some-field', '3'],
        'someField',
        'Remove --some-field; the known flags are --key, --handler, --payload',
      ],
      [['--in', '5m'], 'in', '--in is --delay here: rename the flag --in to --delay.'],
      [
        ['--attempts', '3'],
        'attempts',
        `BullMQ's --attempts is "retry.attempts" here: move it into --retry, e.g. --retry '{"attempts": …}'.`,
      ],
    ];
    for (const [flag, field, fix] of cases) {
      const error = flagFieldRefusal(refused(field, 'the API fix'), parseArgs(['--key', 'a', ...flag]));
      expect(error).toMatchObject({
        field,
        message: `${flag[0]}: the timer spec has an unknown field "${field}"`,
      });
      expect(error.fix.startsWith(fix)).toBe(true);
    }
    // a field from --file, a known field's refusal, another reason: as the API said
    const fromFile = refused('maxRun', 'the API fix');
    expect(flagFieldRefusal(fromFile, parseArgs(['--key', 'a']))).toBe(fromFile);
    const known = refused('delay', 'the API fix');
    expect(flagFieldRefusal(known, parseArgs(['--delay', 'x']))).toBe(known);
    const batch = refused('specs[1].maxRun', 'the API fix');
    expect(flagFieldRefusal(batch, parseArgs(['--max-run', '3'])).fix).toMatch(/^Did you mean --max-runs\?/);
  });

  it('refuses a spec with nothing in it, or a stray positional, as usage errors', () => {
    expect(() => specFromArgs(parseArgs([]), usage)).toThrow(expect.objectContaining({ reason: 'usage' }));
    expect(() => specFromArgs(parseArgs(['oops', '--key', 'a']), usage)).toThrow(
      /unexpected argument "oops"/,
    );
    expect(() => specFromArgs(parseArgs(['--key']), usage)).toThrow(/--key needs a value/);
    // `--key --handler h`: the next option is not --key's value
    expect(() => specFromArgs(parseArgs(['--key', '--handler', 'h']), usage)).toThrow(/--key needs a value/);
  });

  it('refuses an object or array that is not JSON as a usage error, rather than sending it as text', () => {
    const spec = (...argv: string[]) => specFromArgs(parseArgs(['--key', 'a', ...argv]), usage);
    for (const bad of ['{"hello":"world"', '[1, 2', "{hello: 'world'}"]) {
      expect(() => spec('--payload', bad)).toThrow(
        expect.objectContaining({
          reason: 'usage',
          message: expect.stringMatching(/^--payload .* is not JSON: /),
        }),
      );
    }
    expect(() => spec('--retry', '{"attempts":3')).toThrow(/^--retry \{"attempts":3 is not JSON: /);
    // Text that does not start with { or [ stays text, as does a JSON string.
    expect(spec('--payload', 'hello {world}', '--delay', '5s')).toMatchObject({ payload: 'hello {world}' });
    expect(spec('--payload', '"[note]"')).toMatchObject({ payload: '[note]' });
  });
});

describe('sundial CLI: a timer as text', () => {
  // A one-shot as GET /v1/timers/:key answers it, but for its payload.
  const timer: Omit<Timer, 'payload'> = JSON.parse(
    '{"id":"1p0","key":"a","version":1,"kind":"once","status":"pending","handler":"log","scheduledAt":0,' +
      '"dueAt":5000,"delayMs":5000,"runCount":0,"awaitTask":true,"removeOnComplete":true,' +
      '"delivery":"at-least-once","lastFiredAt":null,"lastCompletedAt":null,"lastErrorAt":null,"last":null}',
  );

  it('says a timer has no payload, and how big one is without printing it', () => {
    expect(timerText({ ...timer, payload: null })).toMatch(/^payload: +none$/m);
    expect(timerText({ ...timer, payload: { id: 42 } })).toMatch(
      /^payload: +9 bytes \(--show-payload prints it\)$/m,
    );
    expect(timerText({ ...timer, payload: { id: 42 } }, true)).toMatch(/^payload: +\{"id":42\}$/m);
  });

  it("shows a timer's timeout, after its runs, only when it has one", () => {
    expect(timerText({ ...timer, payload: null, timeout: 900_000 })).toMatch(
      /^runs: +0\ntimeout: +15 min\n/m,
    );
    expect(timerText({ ...timer, payload: null })).not.toMatch(/^timeout:/m);
  });
});

/** The requests each command sends, seen by a local HTTP server standing in for the scheduler. */
