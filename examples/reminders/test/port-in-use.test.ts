import {
  childOutput,
  DIST,
  ensureBuilt,
  type RedisServer,
  spawnOwned,
  startRedis,
} from '@sundial/testing/harness';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * examples/reminders started on a port another process holds (README: run it beside `npm start`, whose
 * scheduler has 3000): one line naming the port and the fix, as the apps' fatal line does
 * (libs/server/src/start-failure.ts). It printed Node's raw `listen EADDRINUSE` stack, with no fix.
 */
describe('examples/reminders on a port in use', () => {
  let redis: RedisServer;
  let taken: Server;
  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve)); // every interface, as the example listens
  }, 180_000);
  afterAll(async () => {
    taken?.close();
    await redis?.stop();
  });

  it('exits 1 with one line naming the port and saying to set PORT', async () => {
    const port = (taken.address() as AddressInfo).port;
    const child = spawnOwned(process.execPath, [join(DIST, 'examples/reminders/src/main.js')], {
      env: { ...process.env, REDIS_URL: redis.url, PORT: String(port), HEARTBEAT_EVERY: '1h' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = childOutput(child);
    expect(await output.ended).toEqual({ code: 1, signal: null });
    expect(output.lines).toContainEqual(
      JSON.stringify({
        msg: `reminders could not start: port ${port} on :: is in use by another process`,
        fix: `Stop what listens on port ${port}, or start this app on another one: set PORT, e.g. PORT=3002 beside npm start.`,
      }),
    );
    expect(output.lines.join('\n')).not.toMatch(/\n\s+at /); // no stack
  }, 60_000);
});
