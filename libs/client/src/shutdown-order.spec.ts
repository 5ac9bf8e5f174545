import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { VirtualClock } from '@sundial/core';
import { OnTimer, SundialModule, Timers } from './index';

/** What a handler uses, closed where Nest's docs close a connection: at the app's shutdown. */
@Injectable()
class Database implements OnApplicationShutdown {
  open = true;
  onApplicationShutdown(): void {
    this.open = false;
  }
}

@Injectable()
class Export {
  readonly seen: boolean[] = [];
  release = (): void => undefined;
  constructor(@Inject(Database) private readonly db: Database) {}

  @OnTimer('export.run')
  async run(): Promise<void> {
    await new Promise<void>((resolve) => (this.release = resolve));
    this.seen.push(this.db.open);
  }
}

describe('the memory backend drains before the app closes what handlers use', () => {
  it("a run that ends within the grace still finds a provider open that closes in onApplicationShutdown (as SundialWorkerModule's drain does)", async () => {
    const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory', clock, shutdownGraceMs: 5_000 })],
      providers: [Database, Export],
    }).compile();
    await moduleRef.init();
    await moduleRef.get(Timers).schedule({ key: 'export', handler: 'export.run', delay: 10 });
    await clock.advance(10);
    const closing = moduleRef.close();
    await clock.advance(1_000); // virtual clock: within the grace
    moduleRef.get(Export).release();
    await closing;
    expect(moduleRef.get(Export).seen).toEqual([true]);
    expect(moduleRef.get(Database).open).toBe(false);
  });
});
