import { createEngine } from '../engine/engine';
import type { Timer, TimerSpec } from '../types';
import { VirtualClock } from '../virtual-clock';
import { timerSpecFields } from '@sundial/testing/harness';
import { againSpec, againWay, endAtLeftOutText, firstSlotProbe, ownerOf } from './again-spec';

const T = Date.parse('2026-03-01T09:00:00Z');
const HOUR = 3_600_000;

describe('againSpec: the spec that schedules a kept timer that ended again, from its row', () => {
  let clock: VirtualClock;
  let engine: ReturnType<typeof createEngine>;
  beforeEach(() => {
    clock = new VirtualClock(T);
    engine = createEngine({
      clock,
      handlers: { tick: () => undefined, boom: () => Promise.reject(new Error('boom')) },
    });
  });
  afterEach(() => engine.dispose());

  /** `spec` scheduled and run out on the virtual clock: the row it leaves, and that row scheduled again. */
  const endedThenAgain = async (spec: TimerSpec, runFor = HOUR) => {
    await engine.schedule({ removeOnComplete: false, ...spec });
    await clock.advance(runFor); // virtual clock
    // as the API sends it (and outside jest's realm: the engine's copies are made with structuredClone)
    const ended = JSON.parse(JSON.stringify(await engine.get(spec.key))) as Timer;
    expect(['completed', 'failed']).toContain(ended.status);
    // as the CLI and the UI do: the first slot asked of the scheduler's preview when the endAt may be kept
    const probe = firstSlotProbe(ended, clock.now());
    const first = probe && (await engine.preview(probe as unknown as TimerSpec, { count: 1 })).next[0];
    const again = againSpec(ended, clock.now(), first ? Date.parse(first.at) : undefined);
    const created = await engine.schedule(again.spec as unknown as TimerSpec);
    return { ended, again, created };
  };

  it('an interval that reached maxRuns: every policy it carries, maxRuns counted afresh', async () => {
    const { ended, again, created } = await endedThenAgain({
      key: 'beat',
      handler: 'tick',
      payload: { n: 1 },
      meta: { team: 'ops' },
      every: '1m',
      maxRuns: 3,
      overlap: 'buffer-one',
      retry: { attempts: 2, backoff: { type: 'exponential', delay: '1s', maxDelay: '4s' } },
      timeout: '30s',
      delivery: 'at-most-once',
      catchup: 'skip',
      catchupWindow: '10m',
      jitter: '5s',
      startAt: T - HOUR,
      endAt: T + 2 * HOUR,
    });
    expect(ended).toMatchObject({ status: 'completed', runCount: 3 });
    expect(again).toEqual({
      spec: expect.objectContaining({ every: 60_000, maxRuns: 3, endAt: T + 2 * HOUR }),
    });
    expect(again.spec).not.toHaveProperty('delay');
    expect(created).toMatchObject({ status: 'pending', runCount: 0 });
    expect(timerSpecFields(created)).toEqual(timerSpecFields(ended));
  });

  // awaitTask false is refused on a cron: the row's overlap says it, and is what is sent
  it.each<[string, TimerSpec, string]>([
    [
      'a cron that failed, overlap allow',
      {
        key: 'report',
        handler: 'boom',
        cron: '*/10 * * * *',
        tz: 'Europe/Paris',
        overlap: 'allow',
        pauseAfterFailures: 3,
        maxRuns: 1,
      },
      'failed',
    ],
    [
      'an interval with awaitTask false',
      { key: 'free', handler: 'tick', every: '1m', awaitTask: false, maxRuns: 2 },
      'completed',
    ],
  ])('%s: its overlap is sent, no awaitTask, the same policies', async (_, spec, status) => {
    const { ended, again, created } = await endedThenAgain(spec);
    expect(ended).toMatchObject({ status, awaitTask: false, overlap: 'allow' });
    expect(again.spec).toMatchObject({ overlap: 'allow' });
    expect(again.spec).not.toHaveProperty('awaitTask');
    expect(timerSpecFields(created)).toEqual(timerSpecFields(ended));
  });

  it('an endAt passed is left out and said: sent, the spec is refused', async () => {
    const spec: TimerSpec = {
      key: 'campaign',
      handler: 'tick',
      cron: '0 * * * *',
      tz: 'UTC',
      endAt: T + 2 * HOUR,
    };
    const { ended, again, created } = await endedThenAgain(spec, 3 * HOUR);
    expect(ended.status).toBe('completed');
    expect(again.endAtLeftOut).toEqual({ at: T + 2 * HOUR, why: 'passed' });
    expect(again.spec).not.toHaveProperty('endAt');
    expect(created.endAt).toBeUndefined();
    // what sending it anyway does: refused, its end before the first slot
    await expect(
      engine.schedule({ ...(again.spec as unknown as TimerSpec), endAt: T + 2 * HOUR, ifExists: 'replace' }),
    ).rejects.toMatchObject({ reason: 'invalid', field: 'endAt' });
  });

  it('an endAt not passed but before the first slot (the timer ended with no slot left) is left out and said', async () => {
    // hourly, endAt at 11:30: the 11:00 run is the last (no slot before 11:30 after it), so at 11:10 the
    // timer has ended with its endAt still ahead, and the new timer's first slot, 12:00, is past it
    const endAt = T + 2.5 * HOUR;
    const spec: TimerSpec = { key: 'window', handler: 'tick', cron: '0 * * * *', tz: 'UTC', endAt };
    const { ended, again, created } = await endedThenAgain(spec, 2 * HOUR + 10 * 60_000);
    expect([ended.status, ended.endAt, clock.now() < endAt]).toEqual(['completed', endAt, true]);
    expect(again.endAtLeftOut).toEqual({ at: endAt, why: 'no-slot' });
    expect(created.endAt).toBeUndefined();
    expect(endAtLeftOutText(again.endAtLeftOut!, '11:30')).toBe(
      "its endAt, 11:30, comes before the new timer's first slot (no slot is left before it): it is left out, so the new timer has no end.",
    );
    // without the first slot it was kept, and the spec refused: its end before the first slot
    expect(againSpec(ended, clock.now()).spec).toMatchObject({ endAt });
    await expect(
      engine.schedule({ ...(again.spec as unknown as TimerSpec), endAt, ifExists: 'replace' }),
    ).rejects.toMatchObject({ reason: 'invalid', field: 'endAt' });
  });

  it('an endAt the first slot reaches is kept', async () => {
    const endAt = T + 5 * HOUR;
    const spec: TimerSpec = { key: 'kept-end', handler: 'tick', every: '1h', endAt, maxRuns: 1 };
    const { again, created } = await endedThenAgain(spec, 2 * HOUR);
    expect(again.endAtLeftOut).toBeUndefined();
    expect(created.endAt).toBe(endAt);
  });

  it('a one-shot: due now with its options, none of a periodic timer', async () => {
    const { again, created } = await endedThenAgain({
      key: 'once',
      handler: 'boom',
      delay: '1m',
      payload: [1],
      retry: { attempts: 2 },
      timeout: '10s',
    });
    expect(again).toEqual({
      spec: {
        key: 'once',
        handler: 'boom',
        payload: [1],
        delay: 0,
        delivery: 'at-least-once',
        removeOnComplete: false,
        retry: { attempts: 2, backoff: { type: 'fixed', delay: 1000 } },
        timeout: 10_000,
      },
    });
    expect(created).toMatchObject({ status: 'pending', dueAt: clock.now() });
  });
});

describe('againWay: what an ended row is offered', () => {
  const row = { key: 'k', handler: 'h', payload: null, delivery: 'at-least-once', runCount: 1 };
  it.each([
    [{ kind: 'once', status: 'failed' }, 'run'],
    [{ kind: 'once', status: 'completed' }, 'run'],
    [{ kind: 'interval', status: 'completed' }, 'schedule'],
    [{ kind: 'cron', status: 'failed' }, 'schedule'],
    [{ kind: 'cron', status: 'pending' }, 'none'],
    [{ kind: 'interval', status: 'paused' }, 'none'],
    [{ kind: 'once', status: 'cancelled' }, 'none'],
    [
      { kind: 'cron', status: 'completed', meta: { sundialOwner: 'distributed-cron', sundialApp: 'a' } },
      'owned',
    ],
    [{ kind: 'once', status: 'failed', meta: { sundialOwner: 'schedules-file' } }, 'owned'],
    [{ kind: 'interval', status: 'completed', meta: { owner: 'billing' } }, 'schedule'],
  ] as const)('%j: %s', (fields, way) => {
    expect(againWay({ ...row, ...fields })).toBe(way);
  });

  it('ownerOf names the owner and its app', () => {
    expect(ownerOf({ meta: { sundialOwner: 'distributed-interval', sundialApp: 'billing' } })).toEqual({
      owner: 'distributed-interval',
      app: 'billing',
    });
    expect(ownerOf({ meta: { sundialOwner: 'schedules-file', sundialRow: 'x' } })).toEqual({
      owner: 'schedules-file',
    });
    expect(ownerOf({ meta: null })).toBeUndefined();
    expect(ownerOf({})).toBeUndefined();
  });
});
