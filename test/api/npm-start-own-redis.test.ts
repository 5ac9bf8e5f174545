import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { childOutput, ensureBuilt, freePort, startRedis } from '@sundial/testing';
import { bothReady, spawnStart } from './npm-start-harness';

/**
 * `npm start` without REDIS_URL where another Redis answers on its own port (someone's second Redis on
 * 6380): it writes nothing into that Redis and says how to use it or move its own; one it started itself
 * earlier in this directory (left running by a SIGKILL) is used.
 */
describe('npm start without REDIS_URL, its port answering', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('exits 1 at another Redis, saying how to use it or where to run its own, writing nothing', async () => {
    const other = await startRedis();
    const start = spawnStart(
      { REDIS_URL: undefined, SUNDIAL_START_REDIS_PORT: String(other.port) },
      await freePort(),
      await freePort(),
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const output = childOutput(start);
    expect(await output.ended).toEqual({ code: 1, signal: null });
    const keys = new Redis(other.url);
    const written = await keys.dbsize().finally(() => keys.disconnect());
    await other.stop();
    expect(written).toBe(0);
    expect(output.lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^\\[start\\] Another Redis answers at redis://127\\.0\\.0\\.1:${other.port}, where npm start runs its own ` +
            'when REDIS_URL is not set \\(its data is in .+, not .+/\\.sundial/redis\\)\\.$',
        ),
      ),
      `Set REDIS_URL=redis://127.0.0.1:${other.port} to use that Redis, or SUNDIAL_START_REDIS_PORT to run npm start's own on another port.`,
    ]);
  }, 60_000);

  it("uses npm start's own Redis left running in this directory, and leaves it running", async () => {
    const own = await startRedis();
    const cwd = mkdtempSync(join(tmpdir(), 'sundial-start-own-'));
    mkdirSync(join(cwd, '.sundial'));
    symlinkSync(own.dir, join(cwd, '.sundial', 'redis')); // where a private one started here keeps its data
    const [port, workerPort] = [await freePort(), await freePort()];
    const start = spawnStart(
      { REDIS_URL: undefined, SUNDIAL_START_REDIS_PORT: String(own.port), LOG_LEVEL: 'warn' },
      port,
      workerPort,
      { cwd, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const output = childOutput(start);
    try {
      await bothReady(port, workerPort);
    } finally {
      start.kill('SIGINT'); // forwarded to both apps, which drain and exit 0
    }
    expect(await output.ended).toEqual({ code: 0, signal: null });
    expect(output.lines).toContain(
      `[start] npm start's own redis-server already runs at redis://127.0.0.1:${own.port} ` +
        `(AOF in ${join(cwd, '.sundial', 'redis')}): using it`,
    );
    const client = new Redis(own.url);
    const [pong, partitions] = await Promise.all([client.ping(), client.get('sundial:partitions')]);
    client.disconnect();
    await own.stop();
    rmSync(cwd, { recursive: true, force: true });
    expect({ pong, partitions }).toEqual({ pong: 'PONG', partitions: '1' });
  }, 120_000);

  it('exits 1 on a SUNDIAL_START_REDIS_PORT that is no port', async () => {
    const start = spawnStart({ REDIS_URL: undefined, SUNDIAL_START_REDIS_PORT: '70000' }, 1, 2, {
      cwd: tmpdir(), // where a private redis-server would keep its data, were one started
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = childOutput(start);
    expect(await output.ended).toEqual({ code: 1, signal: null });
    expect(output.lines).toEqual([
      '[start] SUNDIAL_START_REDIS_PORT="70000" is not a port: write an integer from 1 to 65535, or leave it unset for 6380.',
    ]);
  }, 60_000);
});
