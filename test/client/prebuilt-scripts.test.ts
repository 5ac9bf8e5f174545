import { execFile } from 'node:child_process';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureBuilt, installedLibraries } from '@sundial/testing/harness';
import { assembleScripts } from '../../libs/redis/src/store/script-prebuilt';

/** The scripts and libraries as entries of name → { name, lua } / { name, code }, as JSON carries them. */
interface Sent {
  commands: [string, { name: string; lua: string }][];
  libraries: [string, { name: string; code: string }][];
}

/**
 * `npm run build` assembles every Lua script and function library once (scripts/copy-assets.js) and a
 * process started from dist reads them instead of assembling them at its start; one run from the
 * sources (this jest process) assembles them. Here the built @sundial/redis is installed as an app
 * installs it, and a child process started there says what it would send.
 */
describe('the scripts a process started from dist sends', () => {
  /** what the sources assemble, in this process */
  let fromSources: Sent;
  let remove: () => void;
  /** the app's folder, where the child starts */
  let app: string;
  /** the installed @sundial/redis's store folder: the loader, the .lua files, the build's file */
  let store: string;

  beforeAll(async () => {
    // deadline: a stale dist is rebuilt first (npm run build, ~1.5 min at load)
    await ensureBuilt();
    const { commands, libraries } = assembleScripts();
    fromSources = { commands: [...commands], libraries: [...libraries] };
  }, 300_000);

  beforeEach(() => {
    const installed = installedLibraries(['core', 'redis']);
    ({ app, remove } = installed);
    store = join(app, 'node_modules/@sundial/redis/store');
  });

  afterEach(() => remove());

  async function sent(): Promise<Sent> {
    const script = `
      const loader = require('@sundial/redis/store/script-loader.js');
      const scripts = { commands: [...loader.loadCommands()], libraries: [...loader.functionLibraries()] };
      process.stdout.write(JSON.stringify(scripts));
    `;
    // every script and library, whole: more than execFile's 1 MiB of stdout since the scope records' include
    const maxBuffer = 16 * 1024 * 1024;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: app, maxBuffer });
    return JSON.parse(stdout) as Sent;
  }

  /**
   * Every text in the build's file marked, its lengths and fingerprint kept: `local ` becomes `LOCAL `
   * (each script has locals; the file's header has none). A process that reads the file sends them so.
   */
  function markBuildFile(): void {
    const file = join(store, 'assembled-scripts.txt');
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll('local ', 'LOCAL '));
  }

  /** Whether a text came from the marked file. */
  const marked = (text: string) => text.includes('LOCAL ') && !text.includes('local ');

  function texts({ commands, libraries }: Sent): string[] {
    return [...commands.map(([, { lua }]) => lua), ...libraries.map(([, { code }]) => code)];
  }

  it('are byte for byte what the sources assemble, every script and library', async () => {
    const fromDist = await sent();
    expect(fromDist.commands.map(([script]) => script)).toEqual(
      fromSources.commands.map(([script]) => script),
    );
    expect(fromDist.libraries.map(([script]) => script)).toEqual(
      fromSources.libraries.map(([script]) => script),
    );
    expect(fromDist).toEqual(fromSources);
  });

  it("are read from the build's file, not assembled", async () => {
    markBuildFile();
    const fromDist = texts(await sent());
    expect(fromDist.length).toBe(texts(fromSources).length);
    for (const text of fromDist) expect(marked(text)).toBe(true);
  });

  it('are assembled anew when a .lua file changed after the build', async () => {
    markBuildFile();
    appendFileSync(join(store, 'commands/includes/layout-fence.lua'), '-- changed after the build\n');
    const fromDist = await sent();
    expect(texts(fromDist).filter(marked)).toEqual([]);
    // the layout fence is first in every script: each one has the change
    for (const text of texts(fromDist)) expect(text).toContain('-- changed after the build');
  });

  it.each([
    ['a .lua file was added', () => writeFileSync(join(store, 'commands/includes/unused.lua'), '')],
    ['the assembling code changed', () => appendFileSync(join(store, 'script-functions.js'), '\n')],
    ['the file is cut short', () => writeFileSync(join(store, 'assembled-scripts.txt'), '{"finger')],
    ['there is no file', () => rmSync(join(store, 'assembled-scripts.txt'))],
  ])('are assembled anew when %s', async (_case, change) => {
    markBuildFile();
    change();
    expect(await sent()).toEqual(fromSources);
  });
});
