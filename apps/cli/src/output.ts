import type { Timer } from '@sundial/core';

/** Where a command's answer goes: JSON for scripts (`--json`), text for people. */
export interface Output {
  readonly json: boolean;
  /** prints `value` as JSON with --json, else the text `readable` builds */
  result(value: unknown, readable: () => string): void;
  /**
   * prints a part of the answer as it is, for an answer printed as it comes (`list --all`): settled when
   * the answer's stream takes more, so that a command awaiting it holds no more than a part unwritten
   */
  part(text: string): Promise<void>;
  /** a line of progress for people, on stderr so that stdout stays the answer (with --json too) */
  progress(line: string): void;
}

/** The stream an answer goes to (stdout): `write` says false when its buffer is full, `drain` when it has room. */
export interface AnswerStream {
  write(text: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

export function createOutput(
  json: boolean,
  answer: AnswerStream,
  writeProgress: (text: string) => void,
): Output {
  return {
    json,
    result(value, readable) {
      answer.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${readable()}\n`);
    },
    part(text) {
      // stdout to a pipe is written asynchronously (POSIX): what its reader has not taken waits in this
      // process's buffer, which grows without bound if the next part is written regardless (`| less`).
      if (answer.write(text)) return Promise.resolve();
      return new Promise((drained) => answer.once('drain', () => drained()));
    },
    progress(line) {
      writeProgress(`${line}\n`);
    },
  };
}

/**
 * Control characters (C0, DEL, C1) and bidirectional overrides, which a terminal would act on rather
 * than show: an ANSI escape in a handler's error message could recolour, hide or rewrite the lines
 * around it, a newline forge a row, a right-to-left override reverse the text after it.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` as the terminal should show it: each such character written as its escape (`\n`, `\u001b`). */
export function printable(text: string): string {
  return text.replace(
    UNPRINTABLE,
    (char) => NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A plain-text table: a header row and columns padded to their widest cell (each printable). */
export function table(headers: string[], rawRows: string[][]): string {
  const rows = new TableRows(headers);
  for (const row of rawRows) rows.add(row);
  return [...rows.lines()].join('\n');
}

/** Cells of a row kept as one string: printable() leaves no control character, so NUL cannot be in one. */
const CELL = '\u0000';

/**
 * A table's rows taken as they come, each kept as one string of its printable cells (not the objects
 * they were read from: `list --all` over 200,000 timers held every page, 558 MB), the widths kept up.
 */
export class TableRows {
  private readonly rows: string[] = [];
  private readonly widths: number[];

  constructor(private readonly headers: string[]) {
    this.widths = headers.map((header) => header.length);
  }

  get count(): number {
    return this.rows.length;
  }

  add(rawRow: string[]): void {
    const row = rawRow.map(printable);
    // A loop, not Math.max(...cells): `list --all` over ~100,000 timers would pass more arguments than
    // the stack holds (RangeError: Maximum call stack size exceeded).
    row.forEach((cell, i) => (this.widths[i] = Math.max(this.widths[i], cell.length)));
    this.rows.push(row.join(CELL));
  }

  /** The header line, then a line per row, columns lined up. */
  *lines(): Generator<string> {
    const line = (cells: string[]) =>
      cells
        .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(this.widths[i])))
        .join('  ')
        .trimEnd();
    yield line(this.headers);
    for (const row of this.rows) yield line(row.split(CELL));
  }
}

/** `key: value` lines, names aligned, values printable. */
export function fields(rows: [string, string][]): string {
  const width = Math.max(...rows.map(([name]) => name.length)) + 1;
  return rows.map(([name, value]) => `${`${name}:`.padEnd(width)} ${printable(value)}`).join('\n');
}

/** An instant as ISO 8601 (UTC), or — when there is none. */
export function time(at: number | string | null | undefined): string {
  if (at === null || at === undefined) return '—';
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? String(at) : date.toISOString();
}

/** The schedule in words, from the one source the operator UI uses too (libs/core/src/browser). */
export { scheduleText as schedule } from '../../../libs/core/src/browser/duration-text';

export function lastRun(timer: Timer): string {
  const last = timer.last;
  if (!last) return '—';
  return last.status === 'failed'
    ? `failed (${last.error?.reason ?? last.error?.message ?? '?'})`
    : last.status;
}
