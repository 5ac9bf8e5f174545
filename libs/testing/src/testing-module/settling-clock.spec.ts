import { readFile } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedCron, OnTimer, Timers } from '@sundial/client';
import { type TimerContext, VirtualClock } from '@sundial/core';
import { SundialTestingModule } from './sundial-testing.module';

/** A store the handlers write to through real I/O, as a test database would (a file read: libuv's pool). */
@Injectable()
class Store {
  readonly rows: string[] = [];

  async save(row: string): Promise<void> {
    await readFile(__filename);
    this.rows.push(row);
  }
}

@Injectable()
class Reports {
  constructor(@Inject(Store) private readonly store: Store) {}

  @OnTimer('report.send')
  async send(payload: { id: string }, ctx: TimerContext): Promise<void> {
    await this.store.save(`sent ${payload.id} ${new Date(ctx.due).toISOString().slice(0, 10)}`);
  }

  @DistributedCron('report.daily', '0 9 * * *')
  async daily(_payload: unknown, ctx: TimerContext): Promise<void> {
    await this.store.save(`daily ${new Date(ctx.due).toISOString().slice(0, 10)}`);
  }

  @OnTimer('report.hang')
  async hang(_payload: unknown, ctx: TimerContext): Promise<void> {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
  }
}

async function boot(settleMs?: number) {
  const moduleRef = await Test.createTestingModule({
    imports: [SundialTestingModule.forRoot({ now: '2026-03-01T00:00:00Z', settleMs })],
    providers: [Store, Reports],
  }).compile();
  await moduleRef.init();
  const timers = moduleRef.get(Timers);
  await timers.schedule({ key: 'report:1', handler: 'report.send', payload: { id: 'r1' }, delay: '2d' });
  return { moduleRef, timers, clock: moduleRef.get(VirtualClock), store: moduleRef.get(Store) };
}

describe('SundialTestingModule settleMs: handlers that await real I/O', () => {
  it('settle within each tick of advance: every slot runs and each outcome is recorded', async () => {
    const { moduleRef, timers, clock, store } = await boot(5_000); // deadline: a file read, far shorter
    await clock.advance('4d');
    expect(store.rows).toEqual([
      'daily 2026-03-01',
      'daily 2026-03-02',
      'sent r1 2026-03-03',
      'daily 2026-03-03',
      'daily 2026-03-04',
    ]);
    expect(await timers.get('cron:report.daily')).toMatchObject({ runCount: 4, last: { status: 'ok' } });
    await moduleRef.close();
  });

  it('without it they do not (what the option is for): the cron run stays running and its later slots skip', async () => {
    const { moduleRef, timers, clock, store } = await boot();
    await clock.advance('4d');
    expect(store.rows.filter((row) => row.startsWith('daily'))).not.toHaveLength(4);
    expect(await timers.get('cron:report.daily')).toMatchObject({ runCount: 1 });
    await moduleRef.close();
  });

  it('a run that waits on its signal is waited for once, then stays pending; cancel ends it', async () => {
    const { moduleRef, timers, clock } = await boot(50);
    await timers.schedule({ key: 'hang:1', handler: 'report.hang', delay: '1h' });
    await clock.advance('2d');
    expect(await timers.get('hang:1')).toMatchObject({ status: 'running' });
    expect(await timers.cancel('hang:1')).toBe(true);
    await moduleRef.close();
  });

  it("advances as VirtualClock's does: a negative one rejects, time moves to the target", async () => {
    const { moduleRef, clock } = await boot(1_000);
    await expect(clock.advance(-1)).rejects.toMatchObject({ reason: 'invalid', field: 'advance' });
    await clock.advance('90m');
    expect(new Date(clock.now()).toISOString()).toBe('2026-03-01T01:30:00.000Z');
    await moduleRef.close();
  });

  it('is an integer of ms from 0', () => {
    expect(() => SundialTestingModule.forRoot({ settleMs: -1 })).toThrow(
      expect.objectContaining({ reason: 'invalid', field: 'settleMs' }),
    );
  });
});
