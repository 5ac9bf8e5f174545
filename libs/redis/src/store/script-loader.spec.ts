import Redis from 'ioredis';
import { type RedisServer, startRedis } from '@sundial/testing/harness';
import {
  defineCommands,
  FUNCTION_SCRIPTS,
  functionLibraries,
  loadCommands,
  loadFunctions,
  runScript,
  SCRIPT_NAMES,
  type ScriptName,
} from './script-loader';
import { withoutUnusedFunctions } from './script-assembly';

describe('Lua commands', () => {
  let server: RedisServer;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
  });

  afterAll(async () => {
    await redis?.quit();
    await server?.stop();
  });

  it('loads every command with its includes inlined once, as a script or a library, and each compiles', async () => {
    const commands = loadCommands();
    // a function script is only FCALLed: it has its library and no EVAL form
    expect([...commands.keys()]).toEqual(SCRIPT_NAMES.filter((script) => !FUNCTION_SCRIPTS.has(script)));
    expect([...commands.keys(), ...functionLibraries().keys()].sort()).toEqual([...SCRIPT_NAMES].sort());
    const sources = [
      ...[...commands.values()].map(({ lua }) => lua),
      ...[...functionLibraries().values()].map(({ code }) => code),
    ];
    for (const lua of sources) {
      expect(lua).not.toContain('@include');
      // Included once even when several includes include it (a second `local function` would shadow it).
      expect(lua.match(/local function row_key\(/g)?.length ?? 0).toBeLessThanOrEqual(1);
    }
    for (const command of commands.values()) {
      await expect(redis.script('LOAD', command.lua)).resolves.toMatch(/^[0-9a-f]{40}$/);
    }
    // the libraries compile in 'loads the hot scripts as function libraries' (FUNCTION LOAD)
  });

  it('leaves out the include functions a script never names, and keeps those it does', () => {
    const source = (script: ScriptName) =>
      loadCommands().get(script)?.lua ?? functionLibraries().get(script)?.code ?? '';
    const defines = (script: ScriptName, name: string) => source(script).includes(`local function ${name}(`);
    // includes/indexes brings live-ids and ledger into take-due, which clears no live id
    expect(defines('take-due', 'remove_live_ids')).toBe(false);
    expect(defines('complete', 'remove_live_ids')).toBe(true);
    // only repartition-take folds a closed ledger into a list
    expect(defines('claim', 'ledger_fold_closed')).toBe(false);
    expect(defines('repartition-take', 'ledger_fold_closed')).toBe(true);
    // named only by a function left out (remove_live_ids), it goes too
    expect(defines('take-due', 'write_id_bits')).toBe(false);
    // a cancel clears its one id without the batch path (remove_live_id): none of that is defined
    expect(defines('cancel', 'remove_live_id')).toBe(true);
    expect(defines('cancel', 'write_id_bits')).toBe(false);
    expect(defines('cancel', 'ids_by_bitmap')).toBe(false);
    // a script (EVALSHA) leaves them out as a library does: reconcile includes the ledger, folds none
    expect(defines('reconcile', 'ledger_fold_closed')).toBe(false);
    expect(defines('reconcile', 'ledger_record')).toBe(true);
  });

  it('strips by whole lines and whole words, pass after pass', () => {
    // `end\r` is no `end` line: b's definition runs to c's `end` and takes c with it (b_x is not b);
    // a was named only in c, so the next pass takes a too. What main's line-by-line regexes did.
    const lua = ['local function a()', '  return b_x', 'end', 'local function b()', '  return 1', 'end\r']
      .concat(['local function c()', '  return a()', 'end', 'return c()'])
      .join('\n');
    expect(withoutUnusedFunctions(lua)).toBe('return c()');
    // with b's own `end`, only b goes: c is named by the last line, a by c
    expect(withoutUnusedFunctions(lua.replace('end\r', 'end'))).toBe(
      [
        'local function a()',
        '  return b_x',
        'end',
        'local function c()',
        '  return a()',
        'end',
        'return c()',
      ].join('\n'),
    );
  });

  it('runs a command on a connection and in a pipeline', async () => {
    defineCommands(redis);
    defineCommands(redis); // a second registration is harmless
    // release: a script (EVALSHA) that expires no lease for a worker that holds none
    expect(await runScript(redis, 'release', 'sundial:{p0}:', 50, 'sundial', 'w')).toBe(0);
    const pipeline = redis.pipeline();
    void runScript(pipeline, 'release', 'sundial:{p0}:', 50, 'sundial', 'w');
    expect(await pipeline.exec()).toEqual([[null, 0]]);
  });

  it('loads the hot scripts as function libraries, named by script and code', async () => {
    await loadFunctions(redis);
    await loadFunctions(redis); // a library already there is left as it is
    const listed = (await redis.call('FUNCTION', 'LIST')) as unknown[][];
    const names = listed.map((entry) => String(entry[1]));
    for (const [script, library] of functionLibraries()) {
      expect(library.name).toMatch(new RegExp(`^sundial_${script.replace(/-/g, '_')}_[0-9a-f]{16}$`));
      expect(names).toContain(library.name);
    }
    expect([...functionLibraries().keys()]).toEqual([...FUNCTION_SCRIPTS]);
  });

  it('sets every top-level local that a call writes anew at the start of each call (`--- @per-call`)', () => {
    for (const [script, { code }] of functionLibraries()) {
      const lines = code.split('\n');
      const body = lines.indexOf('local function command_body()');
      const call = lines.indexOf('local function call(keys, args)');
      const start = lines.slice(
        call,
        lines.findIndex((line) => line.startsWith('redis.register_function')),
      );
      // the library's top-level locals, made once per load and kept from call to call
      const locals = lines
        .slice(0, body)
        .flatMap((line) => /^local (?!function)([\w, ]+?)(?: =|$)/.exec(line)?.[1].split(/, */) ?? []);
      expect(locals).toEqual(expect.arrayContaining(['KEYS', 'ARGV', 'ledger', 'ROW_DEFAULTS']));
      // a cache meant to outlive the call says so on the line before it (the request codecs)
      const perLoad = lines.flatMap((line, n) =>
        lines[n - 1]?.startsWith('--- @per-load') ? (/^local (\w+)/.exec(line)?.[1] ?? []) : [],
      );
      expect(perLoad).toEqual(code.includes('local function with_request(') ? ['codecs'] : []);
      // a table made on every call names no field as nil: Lua sizes its hash part by every field named
      expect(start.filter((line) => /\{[^}]*\b\w+ = nil\b/.test(line))).toEqual([]);
      for (const name of locals.filter((local) => !perLoad.includes(local))) {
        // written after its declaration: itself, a field of it, or through table.insert/remove
        const writes = new RegExp(
          `(^|[^.\\w])${name}(\\.\\w+|\\[[^\\]]+\\])?\\s*=[^=]|table\\.\\w+\\(${name}\\b`,
        );
        const written = lines.some((line) => !line.startsWith('local ') && writes.test(line));
        const reset = start.some((line) => new RegExp(`^([\\w]+, )*${name}\\b[\\w, ]*=`).test(line));
        expect({ script, name, written, reset }).toEqual({ script, name, written, reset: written || reset });
      }
    }
  });

  it('calls a function script on a connection only, loading its library when Redis has none', async () => {
    await redis.call('FUNCTION', 'FLUSH');
    const take = () => runScript(redis, 'take-due', 'sundial:{p0}:', 50, 'sundial', 100, 0);
    expect(await take()).toEqual(['', expect.stringMatching(/^\d+$/), [], []]);
    expect(await take()).toEqual(['', expect.stringMatching(/^\d+$/), [], []]);
    expect(() => runScript(redis.pipeline(), 'claim', 'sundial:{p0}:', 50, 'sundial')).toThrow(
      /claim' runs as a Redis Function/,
    );
    expect(await runScript(redis, 'cancel', 'sundial:{p0}:', 50, 'sundial', 1000, 'absent')).toBe(0);
    expect(() => runScript(redis.multi(), 'cancel', 'sundial:{p0}:', 50, 'sundial', 1000, 'absent')).toThrow(
      /cancel' runs as a Redis Function/,
    );
  });

  it('names the missing command instead of failing obscurely', () => {
    expect(() => runScript(redis, 'no-such-script' as ScriptName, 'sundial:{p0}:', 50, 'sundial')).toThrow(
      /no-such-script/,
    );
  });
});
