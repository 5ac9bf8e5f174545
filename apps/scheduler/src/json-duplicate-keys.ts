/** An object being read: the names met so far, and where it is in the body (`payload.items[2]`). */
interface ObjectFrame {
  kind: 'object';
  path: string;
  names: Set<string>;
  /** the next string read is a member's name (after `{` or `,`), not its value */
  atName: boolean;
  /** the last member's name: the path of a value that opens an object or array */
  name: string;
}

interface ArrayFrame {
  kind: 'array';
  path: string;
  index: number;
}

/**
 * The first member name an object of `text` gives more than once, as a path into the body (`key`,
 * `payload.a`, `payload.items[0].id`), or undefined. `text` is JSON the parser took: `JSON.parse`
 * keeps the last of the repeated values where other parsers keep the first or refuse, so the body
 * says two things and the API would act on one of them unsaid (docs/spec.md §5.2). Names are compared
 * as JSON reads them (`"\u006b"` is `"k"`). One pass, no recursion (a body may nest deep).
 */
export function duplicateKey(text: string): string | undefined {
  const stack: (ObjectFrame | ArrayFrame)[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    const top = stack[stack.length - 1];
    if (char === '"') {
      const end = stringEnd(text, i);
      if (top?.kind === 'object' && top.atName) {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.names.has(name)) return member(top.path, name);
        top.names.add(name);
        [top.atName, top.name] = [false, name];
      }
      i = end;
    } else if (char === '{' || char === '[') {
      const path =
        top === undefined
          ? ''
          : top.kind === 'object'
            ? member(top.path, top.name)
            : `${top.path}[${top.index}]`;
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

/** The index of the quote that closes the string opened at `start` (escapes skipped). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}

function member(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}
