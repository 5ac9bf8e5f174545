import { childOutput, DIST, ensureBuilt, freePort, spawnOwned } from '@sundial/testing/harness';
import { join } from 'node:path';

/**
 * examples/reminders deployed with a REDIS_URL nothing answers on (a typo in the port, Redis not up):
 * SundialModule.forRootAsync's start waits `startWaitMs` (SUNDIAL_START_WAIT_MS here), then the app exits
 * 1 with one line saying why and what to fix. It printed an `[ioredis] Unhandled error event` stack per
 * reconnect of the outbox's own connection, then the refusal as a raw stack with its fix buried in it.
 */
describe('examples/reminders with an unreachable REDIS_URL', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('exits 1 after the start wait, with one line carrying reason, field and fix, and no stack', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`; // nothing listens there
    const child = spawnOwned(process.execPath, [join(DIST, 'examples/reminders/src/main.js')], {
      env: {
        ...process.env,
        REDIS_URL: url,
        PORT: '0',
        SUNDIAL_START_WAIT_MS: '1500',
        HEARTBEAT_EVERY: '1h',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = childOutput(child);
    expect(await output.ended).toEqual({ code: 1, signal: null });
    const fatal = output.lines
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, string>)
      .find((line) => line.msg?.startsWith('reminders could not start'));
    expect(fatal).toMatchObject({ reason: 'unavailable', field: 'connection' });
    expect(fatal!.msg).toContain('1500 ms');
    expect(fatal!.fix).toContain('REDIS_URL');
    const all = output.lines.join('\n');
    expect(all).not.toContain('Unhandled error event');
    expect(all).not.toMatch(/\n\s+at /); // no stack
  }, 60_000);
});
