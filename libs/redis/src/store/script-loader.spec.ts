import Redis from 'ioredis';
import { type RedisServer, startRedis } from '@sundial/testing';
import { defineCommands, loadCommands, runScript, SCRIPT_NAMES, type ScriptName } from './script-loader';

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

  it('loads every command with its includes inlined once, and each compiles in Redis', async () => {
    const commands = loadCommands();
    expect([...commands.keys()]).toEqual([...SCRIPT_NAMES]);
    for (const command of commands.values()) {
      expect(command.lua).not.toContain('@include');
      // Included once even when several includes include it (a second `local function` would shadow it).
      expect(command.lua.match(/local function row_key\(/g)?.length ?? 0).toBeLessThanOrEqual(1);
      await expect(redis.script('LOAD', command.lua)).resolves.toMatch(/^[0-9a-f]{40}$/);
    }
  });

  it('leaves out the include functions a script never names, and keeps those it does', () => {
    const commands = loadCommands();
    const defines = (script: ScriptName, name: string) =>
      commands.get(script)?.lua.includes(`local function ${name}(`);
    // includes/indexes brings live-ids and ledger into take-due, which clears no live id
    expect(defines('take-due', 'remove_live_ids')).toBe(false);
    expect(defines('complete', 'remove_live_ids')).toBe(true);
    // only repartition-take folds a closed ledger into a list
    expect(defines('claim', 'ledger_fold_closed')).toBe(false);
    expect(defines('repartition-take', 'ledger_fold_closed')).toBe(true);
    // named only by a function left out (remove_live_ids), it goes too
    expect(defines('take-due', 'write_id_bits')).toBe(false);
  });

  it('runs a command on a connection and in a pipeline', async () => {
    defineCommands(redis);
    defineCommands(redis); // a second registration is harmless
    expect(await runScript(redis, 'cancel', 'sundial:{p0}:', 50, 'sundial', 1000, 'absent')).toBe(0);
    const pipeline = redis.pipeline();
    void runScript(pipeline, 'cancel', 'sundial:{p0}:', 50, 'sundial', 1000, 'absent');
    expect(await pipeline.exec()).toEqual([[null, 0]]);
  });

  it('names the missing command instead of failing obscurely', () => {
    expect(() => runScript(redis, 'no-such-script' as ScriptName, 'sundial:{p0}:', 50, 'sundial')).toThrow(
      /no-such-script/,
    );
  });
});
