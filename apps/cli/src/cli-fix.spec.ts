import type { Timer } from '@sundial/core';
import { noRowToCopy, stillLive } from './again-refusals';
import { parseArgs } from './args';
import { CliError, EXIT } from './cli-error';
import { cliFix, cliMessage } from './cli-fix';
import { flagFieldRefusal } from './flag-refusal';

/**
 * A fix names commands to run (`sundial history <key>`, `sundial list --prefix <scope>`): each must read
 * back, as the CLI parses a command line, as the key and prefix it is about, including a key the CLI
 * would otherwise take for an option (`--json`, which `sundial cancel -- --json` names, README).
 */
const KEYS = ['inv:42:remind', '--json', '-h', '--json:42', "it's one"];

/** What each `sundial <command> …` of a fix names, its words read as a shell and then the CLI read them. */
function named(fix: string): (string | undefined)[] {
  // `sundial again is for …` names the command, not a command line
  const lines = [...fix.matchAll(/sundial (again|history|get|trigger|resume|cancel|list) (?!is )(?=(.*))/g)];
  return lines.map(([, command, rest]) => {
    const words = shellWords(rest);
    if (command === 'list') {
      if (!words[0].startsWith('--prefix')) return ''; // every timer: `sundial list lists …`
      const argv = words[0].startsWith('--prefix=') ? words.slice(0, 1) : words.slice(0, 2);
      return parseArgs(argv).options.get('prefix') as string | undefined;
    }
    const args = parseArgs(words[0] === '--' ? words.slice(0, 2) : words.slice(0, 1));
    return args.options.size > 0 ? undefined : args.positionals[0];
  });
}

/** The first two words of a text as a shell reads them (single quotes, `\\'`); a sentence's `.`/`,` ends one. */
function shellWords(text: string): string[] {
  return [...text.matchAll(/(?:'[^']*'|\\'|[^\s'\\])+/g)].slice(0, 2).map(([word]) => {
    const parts = word.match(/'[^']*'|\\'|[^'\\]+/g)!;
    const last = parts.length - 1;
    if (!parts[last].startsWith("'") && !parts[last].startsWith('\\'))
      parts[last] = parts[last].replace(/[.,)]+$/, '');
    return parts
      .map((part) => (part === "\\'" ? "'" : part.startsWith("'") ? part.slice(1, -1) : part))
      .join('');
  });
}

function fixesFor(key: string): string[] {
  const refused = new CliError(
    { reason: 'not-found', field: 'key', message: 'm', fix: 'f' },
    EXIT.refused,
    404,
  );
  const live = (status: Timer['status']) => stillLive({ key, status } as Timer).fix;
  return [
    cliFix({ reason: 'not-found', field: 'key' }, { status: 404, url: 'u', withToken: false, key })!,
    // a write on a kept timer that ended: sundial again <key>, sundial history <key>
    cliFix(
      { reason: 'not-found', field: 'key', detail: { status: 'completed' } },
      { status: 404, url: 'u', withToken: false, key },
    )!,
    cliFix(
      { reason: 'inactive', detail: { status: 'paused' } },
      { status: 409, url: 'u', withToken: false, key },
    )!,
    noRowToCopy(key, refused).fix,
    live('pending'),
    live('paused'),
  ];
}

describe('the commands a CLI fix names read back as their key', () => {
  it.each(KEYS)('%s', (key) => {
    const scope = key.slice(0, key.lastIndexOf(':') + 1);
    const names = fixesFor(key).flatMap(named);
    expect(names.length).toBeGreaterThanOrEqual(10);
    for (const name of names) expect([key, scope]).toContain(name);
  });
});

// A batch file naming a key twice was told to run "sundial cancel <key> first": there is no timer to cancel.
describe("a batch's key named twice", () => {
  const context = { status: 409, url: 'u', withToken: false };
  const repeated = {
    reason: 'duplicate-key',
    field: 'specs[1].key',
    detail: { code: 'repeated-key' as const },
  };

  it('is fixed in the file, or by --if-exists replace, not by a cancel', () => {
    const fix = cliFix(repeated, context)!;
    expect(fix).toBe(
      'Give each spec of the file its own key, or drop one of the two; to have the later supersede the earlier, give it "ifExists": "replace" in the file (--if-exists replace sets it on every spec).',
    );
  });

  it('says --key set it on every spec, when it did', () => {
    const error = new CliError(
      { ...repeated, message: 'specs[1]: key "zz" is also specs[0]\'s', fix: 'f' },
      1,
      409,
    );
    expect(flagFieldRefusal(error, parseArgs(['--file', 'b.json', '--key', 'zz'])).fix).toBe(
      '--key sets the key of every spec of the batch: leave it out and give each spec of the file its own key.',
    );
  });
});

// Over HTTP a refused cursor speaks of GET /v1/timers pages; the CLI user had it from a page's more: line.
describe('a refused --cursor', () => {
  it("is told in the CLI's terms", () => {
    const bad = {
      reason: 'invalid',
      field: 'cursor',
      message: 'The cursor is not the nextCursor of a GET …',
    };
    expect(cliMessage(bad)).toBe('--cursor is not one a sundial list page printed');
    expect(cliMessage({ ...bad, detail: { code: 'cursor-other-list' } })).toBe(
      '--cursor was printed by a list of another --prefix, --status or --due-before',
    );
    expect(cliMessage({ reason: 'invalid', field: 'limit', message: 'm' })).toBeUndefined();
  });
});
