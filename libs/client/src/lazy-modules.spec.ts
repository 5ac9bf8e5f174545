import { Injectable, Logger, Module } from '@nestjs/common';
import { LazyModuleLoader } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { type TimerSpec, VirtualClock } from '@sundial/core';
import { DistributedCron, OnTimer, SundialModule, Timers } from './index';

@Injectable()
class Exports {
  readonly ran: string[] = [];

  @OnTimer('export.run')
  run(payload: { id: string }): void {
    this.ran.push(payload.id);
  }

  @DistributedCron('export.nightly', '0 2 * * *')
  nightly(): void {}
}

/** A feature loaded on demand (`lazyModuleLoader.load(() => import('./exports.module'))`). */
@Module({ providers: [Exports] })
class ExportsModule {}

@Injectable()
class Eager {
  @OnTimer('export.taken')
  taken(): void {}
}

@Injectable()
class Clash {
  @OnTimer('export.taken')
  again(): void {}
}

@Module({ providers: [Clash] })
class ClashModule {}

/**
 * LazyModuleLoader calls no lifecycle hook of the modules it loads: the explorer, which ran at init,
 * never saw their methods, and a timer naming one was refused (memory: invalid, field handler) or
 * failed `unknown-handler` (Redis).
 */
describe('@OnTimer methods of a module loaded through LazyModuleLoader', () => {
  const boot = async () => {
    const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
    const app = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory', clock, shutdownGraceMs: 0 })],
      providers: [Eager],
    }).compile();
    await app.init();
    return { app, clock, timers: app.get(Timers), loader: app.get(LazyModuleLoader) };
  };

  it('are found at the first lookup after the load, and run', async () => {
    const { app, clock, timers, loader } = await boot();
    const spec: TimerSpec<{ id: string }> = {
      key: 'export:1',
      handler: 'export.run',
      payload: { id: 'e1' },
      delay: '1m',
    };
    await expect(timers.schedule(spec)).rejects.toMatchObject({ reason: 'invalid', field: 'handler' });
    const lines = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const loaded = await loader.load(() => ExportsModule);
      await timers.schedule(spec);
      await clock.advance('1m');
      expect(loaded.get(Exports).ran).toEqual(['e1']);
      // its @DistributedCron runs if its row exists (another build's), but keeps none
      expect(lines).toHaveBeenCalledWith(
        expect.stringContaining(
          "@DistributedCron('export.nightly') on Exports.nightly is in a module loaded after the app's init",
        ),
      );
      expect(await timers.get('cron:export.nightly')).toBeNull();
    } finally {
      lines.mockRestore();
      await app.close();
    }
  });

  it('a name declared twice is logged, not thrown at a lookup: the first owner keeps it', async () => {
    const { app, timers, loader } = await boot();
    const lines = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      await loader.load(() => ClashModule);
      await timers.schedule({ key: 'export:2', handler: 'export.taken', delay: '1m' });
      expect(lines).toHaveBeenCalledWith(
        expect.stringContaining("'export.taken' is declared twice: by Eager.taken and by Clash.again"),
      );
    } finally {
      lines.mockRestore();
      await app.close();
    }
  });
});
