import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { OnTimer, SundialModule, SundialWorkerModule, Timers } from '@sundial/client';
import type { JsonValue } from '@sundial/core';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing';

/** Redis is away this long after the app is made. */
const OUTAGE_MS = 3_000;

@Injectable()
class Notes {
  readonly seen: JsonValue[] = [];

  @OnTimer('note')
  note(payload: JsonValue): void {
    this.seen.push(payload);
  }
}

/**
 * A user's Nest app with SundialModule and SundialWorkerModule booting while its Redis is unreachable
 * (redis-server killed with SIGKILL, started again on its port OUTAGE_MS later), as a pod started
 * during a Redis restart. Before, the boot failed within a second (the @DistributedCron pass's first
 * call answered `unavailable`), and Kubernetes would restart the pod only after its crash-loop back-off;
 * now the boot waits for Redis (up to 30 s) and the app then runs its timers.
 */
describe('a SundialWorkerModule app booted while Redis is unreachable', () => {
  let server: RedisServer;
  let app: TestingModule | undefined;

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await app?.close();
    await server?.stop();
  });

  it('boots once Redis is back and runs a timer', async () => {
    server.kill();
    const boot = async (): Promise<TestingModule> => {
      const module = await Test.createTestingModule({
        imports: [
          SundialModule.forRoot({ connection: server.url, prefix: 'boot' }),
          SundialWorkerModule.forRoot({ prefix: 'boot', dispatch: true }),
        ],
        providers: [Notes],
      }).compile();
      app = module;
      return module.init();
    };
    const [booted] = await Promise.all([boot(), server.restart(OUTAGE_MS)]);
    await booted.get(Timers).schedule({ key: 'after', handler: 'note', payload: 'ran', delay: 0 });
    const notes = booted.get(Notes);
    await waitFor(() => notes.seen.length > 0, { what: 'the @OnTimer run' });
    expect(notes.seen).toEqual(['ran']);
  }, 30_000);
});
