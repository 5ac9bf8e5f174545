import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OnTimer, SundialModule, SundialWorkerModule, Timers } from '@sundial/client';
import { type TimerContext, VirtualClock } from '@sundial/core';
import { SundialTestingModule } from './sundial-testing.module';

/** The AppModule's feature: what a run of 'trial.end' did. */
@Injectable()
class Trials {
  readonly ended: string[] = [];

  @OnTimer('trial.end')
  end(payload: string, ctx: TimerContext): void {
    this.ended.push(`${payload} ${new Date(ctx.due).toISOString()}`);
  }
}

// The app's modules as its AppModule imports them, kept in constants its tests can name (README "Tests").
const sundial = SundialModule.forRoot({ connection: 'redis://127.0.0.1:1' });
const worker = SundialWorkerModule.forRoot({ dispatch: true });

@Module({ imports: [sundial, worker], providers: [Trials] })
class AppModule {}

it("SundialTestingModule replaces an AppModule's own SundialModule and SundialWorkerModule through overrideModule", async () => {
  const app = await Test.createTestingModule({ imports: [AppModule] })
    .overrideModule(sundial)
    .useModule(SundialTestingModule.forRoot({ now: '2026-03-01T12:00:00Z' }))
    .overrideModule(worker)
    .useModule({ module: class NoWorker {} })
    .compile();
  await app.init();
  await app.get(Timers).schedule({ key: 'trial:acme', handler: 'trial.end', payload: 'acme', delay: '14d' });
  await app.get(VirtualClock).advance('14d');
  expect(app.get(Trials).ended).toEqual(['acme 2026-03-15T12:00:00.000Z']);
  await app.close();
});
