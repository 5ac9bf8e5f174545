import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { OnTimer, SundialModule, SundialWorkerModule, Timers } from '@sundial/client';
import { DEFAULT_CLAIM_AHEAD_MS, FireCommands } from '@sundial/redis';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';

@Injectable()
class Ticks {
  runs = 0;

  @OnTimer('tick')
  tick(): void {
    this.runs++;
  }
}

/**
 * SundialWorkerModule's `claimAheadMs` (docs/spec.md §5.1) reaches the claims its runner sends: the
 * default when left out, the given value otherwise (the claim's `aheadMs`, Redis's bound).
 */
describe('SundialWorkerModule claimAheadMs', () => {
  let server: RedisServer;
  let app: TestingModule | undefined;
  const aheads: unknown[] = [];

  beforeAll(async () => {
    server = await startRedis();
  });
  beforeEach(() => {
    const commands = FireCommands.prototype as unknown as { claim(...args: unknown[]): Promise<unknown> };
    const original = commands.claim;
    jest.spyOn(commands, 'claim').mockImplementation(function (this: FireCommands, ...args: unknown[]) {
      aheads.push(args[5]);
      return original.apply(this, args);
    });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    aheads.length = 0;
    await app?.close();
    app = undefined;
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function runOne(prefix: string, claimAheadMs?: number): Promise<void> {
    const module = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({ connection: server.url, prefix }),
        SundialWorkerModule.forRoot({ prefix, dispatch: true, claimAheadMs }),
      ],
      providers: [Ticks],
    }).compile();
    app = await module.init();
    await app.get(Timers).schedule({ key: 'k', handler: 'tick', delay: 300 });
    await waitFor(() => app?.get(Ticks).runs === 1, { what: 'the @OnTimer run' });
  }

  it('claims DEFAULT_CLAIM_AHEAD_MS ahead when left out', async () => {
    await runOne('default');
    expect(DEFAULT_CLAIM_AHEAD_MS).toBeGreaterThan(0);
    expect(aheads.length).toBeGreaterThan(0);
    expect(new Set(aheads)).toEqual(new Set([DEFAULT_CLAIM_AHEAD_MS]));
  });

  it('claims at the due with claimAheadMs 0', async () => {
    await runOne('zero', 0);
    expect(aheads.length).toBeGreaterThan(0);
    expect(new Set(aheads)).toEqual(new Set([0]));
  });
});
