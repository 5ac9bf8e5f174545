import { refusals, type SundialError } from '@sundial/core';

/** An object being read: the names met so far, and where it is in the body (`payload.items[2]`). */
interface ObjectFrame {
  kind: 'object';
  path: string;
  names: Set<string>;
  /** the next string read is a member's name (after `{` or `,`), not its value */
  atName: boolean;
  /** the last member's name: the path of its value */
  name: string;
}

interface ArrayFrame {
  kind: 'array';
  path: string;
  index: number;
}

type Frame = ObjectFrame | ArrayFrame;

/**
 * What a body says that the parsed JSON would not keep (docs/spec.md §5.2), as a refusal, or undefined.
 * `text` is JSON the parser took, and the API would act on what it made of it, unsaid:
 * - a member name an object gives twice (`{"delay":"1h","delay":"2h"}`): `JSON.parse` keeps the last
 *   value, other readers the first or refuse. Names are compared as JSON reads them (`"\u006b"` is `"k"`).
 * - an integer a double does not hold (`"orderId": 12345678901234567890`, a snowflake id): it would be
 *   kept as the nearest double, another number than the one sent (…567000), and handed on so.
 * The field is the value's path in the body (`key`, `payload.lines[1].sku`). One pass, no recursion (a
 * body may nest deep).
 */
export function unkeptJson(text: string): SundialError | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    const top = stack[stack.length - 1];
    if (char === '"') {
      const end = stringEnd(text, i);
      if (top?.kind === 'object' && top.atName) {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.names.has(name)) return repeated(member(top.path, name));
        top.names.add(name);
        [top.atName, top.name] = [false, name];
      }
      i = end;
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      const number = /^-?[0-9][0-9.eE+-]*/.exec(text.slice(i, i + 400))![0];
      if (/^-?\d+$/.test(number) && !keptExactly(number)) return inexact(valuePath(top), number);
      i += number.length - 1;
    } else if (char === '{' || char === '[') {
      const path = valuePath(top);
      stack.push(
        char === '{'
          ? { kind: 'object', path, names: new Set(), atName: true, name: '' }
          : { kind: 'array', path, index: 0 },
      );
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',' && top !== undefined) {
      if (top.kind === 'object') top.atName = true;
      else top.index++;
    }
  }
  return undefined;
}

function repeated(field: string): SundialError {
  return refusals.invalid(
    field,
    `the body gives "${field}" more than once`,
    'Send each field once: JSON readers differ on which of the repeated values they keep.',
  );
}

function inexact(field: string, number: string): SundialError {
  const kept = JSON.stringify(Number(number));
  return refusals.invalid(
    field || 'body',
    `${field || 'the body'} ${number} would be kept as ${kept}: JSON numbers are read as doubles, exact for integers up to ±9007199254740991`,
    `Send it as a string ("${number}"), or as a number within ±9007199254740991.`,
  );
}

/**
 * Whether the integer `text`, read as a double and written again (as the payload is stored and handed
 * on), is the same number: 12345678901234567890 is not (…567000); 123456789012345680000, what
 * JSON.stringify writes of a double, is.
 */
function keptExactly(text: string): boolean {
  const number = Number(text);
  if (!Number.isFinite(number)) return false;
  const [mantissa, exponent = '0'] = JSON.stringify(number).split('e');
  const [whole, fraction = ''] = mantissa.split('.');
  const shift = Number(exponent) - fraction.length;
  return shift >= 0 && BigInt(whole + fraction) * 10n ** BigInt(shift) === BigInt(text);
}

/** The path of the value that comes next in `top` (the body itself when there is none). */
function valuePath(top: Frame | undefined): string {
  if (top === undefined) return '';
  return top.kind === 'object' ? member(top.path, top.name) : `${top.path}[${top.index}]`;
}

/** The index of the quote that closes the string opened at `start` (escapes skipped). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}

function member(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}
