import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assembleScripts, PREBUILT_FILE, readPrebuilt, writePrebuilt } from './script-prebuilt';
import { FUNCTION_SCRIPTS, SCRIPT_NAMES } from './script-names';

/**
 * The file `npm run build` writes (scripts/copy-assets.js): what a process started from dist reads
 * instead of assembling the scripts. test/client/prebuilt-scripts.test.ts runs it from dist itself.
 */
describe('the prebuilt scripts file', () => {
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prebuilt-scripts-'));
    file = join(dir, 'assembled-scripts.txt');
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives back every script and library byte for byte as assembled, in the same order', () => {
    writePrebuilt(file);
    const read = readPrebuilt(file);
    const assembled = assembleScripts();
    expect([...(read?.commands.keys() ?? [])]).toEqual(SCRIPT_NAMES.filter((s) => !FUNCTION_SCRIPTS.has(s)));
    expect([...(read?.libraries.keys() ?? [])]).toEqual([...FUNCTION_SCRIPTS]);
    for (const [script, { name, lua }] of assembled.commands) {
      expect(read?.commands.get(script)?.name).toBe(name);
      expect(read?.commands.get(script)?.lua).toBe(lua);
    }
    for (const [script, { name, code }] of assembled.libraries) {
      expect(read?.libraries.get(script)?.name).toBe(name);
      expect(read?.libraries.get(script)?.code).toBe(code);
    }
  });

  it('is not used when made from other sources, cut short or absent', () => {
    writePrebuilt(file);
    const content = readFileSync(file, 'utf8');
    const fingerprint = /"fingerprint":"([0-9a-f]{40})"/.exec(content)?.[1] ?? '';
    expect(fingerprint).toMatch(/^[0-9a-f]{40}$/);
    expect(readPrebuilt(file)).toBeDefined();
    writeFileSync(file, content.replace(fingerprint, '0'.repeat(40)));
    expect(readPrebuilt(file)).toBeUndefined();
    // cut in the header, then in the texts
    writeFileSync(file, content.slice(0, 100));
    expect(readPrebuilt(file)).toBeUndefined();
    writeFileSync(file, content.slice(0, -100));
    expect(readPrebuilt(file)).toBeUndefined();
    rmSync(file);
    expect(readPrebuilt(file)).toBeUndefined();
  });

  it('is none beside the sources: a process run from them assembles', () => {
    expect(readPrebuilt(PREBUILT_FILE)).toBeUndefined();
  });
});
