/**
 * The calls of the differential suite (differential.test.ts): a seeded generator of calls over the whole
 * write and read surface, each call made the same on both backends (their answers compared as
 * differential-compare.ts says).
 */
import { type ListOptions, nextCronOccurrence, type TimersBackend, type TimerSpec } from '@sundial/core';
import { seededRandom } from '../engine/harness';

/** One backend as a call sees it: `id` turns an id ordinal into its id; `cursor` its last list's. */
export interface Side {
  timers: TimersBackend;
  /** id → ordinal, by first appearance in this side's answers */
  ids: Map<string, number>;
  id(ordinal: number): string;
  cursor: string | null;
  /** what its last `list` was asked (with this side's own cursor) */
  query?: ListOptions;
}

/** One call, made the same on each backend by `run`. */
export interface Call {
  text: string;
  run(side: Side): Promise<unknown>;
  /** a trigger or backfill that answered: runs follow, which the suite lets end on both before the next call */
  runs?: boolean;
  /** a `list` with a `dueBefore`: in each backend's own due order (due-listing.ts) */
  dueOrder?: boolean;
}

const HOUR = 3_600_000;
const KEYS = ['a', 'b', 'g:1', 'g:2', 'g:x:1', 'g:x:2'];
const BAD_KEYS = ['a b', '', '.', 'k'.repeat(257), 7];
const CRONS: [string, string][] = [
  ['30 2 * * *', 'America/New_York'], // 2:30 does not occur on the day DST starts: it runs at 03:00
  ['30 1 * * 0', 'Europe/London'],
  ['0 3 * * *', 'Europe/Paris'],
  ['30 2 * * 0', 'America/New_York'],
  ['0 0 1 * *', 'UTC'],
  ['15 14 * * 1-5', 'Asia/Tokyo'],
  ['0 12 29 2 *', 'UTC'],
];
/** What a field is set to to make a spec wrong (and a few right values that vary a spec). */
const BAD: Record<string, unknown[]> = {
  delay: [-1, 'abc', '1hr', 1e20, Number.NaN],
  at: ['yesterday', '2026-02-30T00:00:00Z', '2026-12-01T00:00:00', -5, 9e15],
  every: [0, 50, '1hr', '2 weeks'],
  cron: ['nope', '0 0 30 2 *', '61 * * * *'],
  tz: ['Mars/Base', 'europe/paris', 5],
  maxRuns: [0, 1.5, -2, '3'],
  awaitTask: ['no', false],
  removeOnComplete: ['yes', 0],
  ifExists: ['replac', 'overwrite'],
  delivery: ['once', 'at-most-twice'],
  overlap: ['sometimes', 'allow', 'bufferone'],
  retry: [{ attempts: 0 }, { attempts: 2, backoff: { type: 'linear', delay: 1 } }, 3, { attempts: 101 }],
  pauseAfterFailures: [0, 2.5, 'x'],
  timeout: [0, '1hr', -3, '400d'],
  catchup: ['some', 'every'],
  catchupWindow: [-1, 'abc'],
  jitter: ['2d', -1, '1hr'],
  startAt: ['x', '2026-13-01T00:00:00Z'],
  endAt: [1, 'soon'],
  meta: [[], 'm', { sundialOwner: 'x' }, { big: 'x'.repeat(70_000) }],
  payload: ['x'.repeat(70_000), [undefined], Number.POSITIVE_INFINITY, new Date(0), { deep: nest(120) }],
  handler: ['bad handler', '', 'h'.repeat(129)],
  dealy: [5],
  evry: ['1h'],
};

function nest(depth: number): unknown {
  return depth === 0 ? 1 : [nest(depth - 1)];
}

export function callsOf(seed: number, count: number, base: number, parts = false): Call[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[random(items.length)];
  const chance = (percent: number) => random(100) < percent;
  const crons = CRONS.filter(([cron, tz]) => nextCronOccurrence(cron, tz, base) > base + HOUR);
  const instant = (hours: number) =>
    chance(50) ? base + hours * HOUR : new Date(base + hours * HOUR).toISOString();
  let recent = KEYS[0]; // the key last scheduled: a call after it often names it
  const key = () => (chance(8) ? pick(BAD_KEYS) : chance(35) ? recent : pick(KEYS)) as string;

  const spec = (): TimerSpec => {
    const kind = pick(['delay', 'at', 'every', 'cron'] as const);
    const s: Record<string, unknown> = { key: key(), handler: 'work' };
    if (KEYS.includes(s.key as string)) recent = s.key as string;
    if (chance(40))
      s.payload = pick([null, 1, 'p', [1, { a: 2 }], { x: { y: [true, null] } }, { fail: 'no' }]);
    if (kind === 'delay') s.delay = pick([HOUR * (1 + random(20)), '2h', '1.5d', '90m']);
    if (kind === 'at') s.at = instant(2 + random(200));
    if (kind === 'every') s.every = pick([HOUR, '2h', '1d', 5 * HOUR]);
    if (kind === 'cron') [s.cron, s.tz] = pick(crons);
    const periodic = kind === 'every' || kind === 'cron';
    if (periodic && chance(40)) s.maxRuns = pick([1, 1, 2, 3]); // a trigger's run may end it
    if (periodic && chance(25)) s.overlap = pick(['skip', 'buffer-one', 'allow', 'cancel-other']);
    if (kind === 'every' && chance(15)) s.awaitTask = false;
    if (chance(15)) s.retry = { attempts: 1 + random(4), backoff: { type: 'fixed', delay: 1000 } };
    if (kind === 'cron' && chance(15)) s.pauseAfterFailures = 1 + random(3);
    if (chance(20)) s.timeout = pick([1000, '5m', '1h']);
    if (chance(40)) s.removeOnComplete = chance(30); // mostly kept: an ended timer's row is read too
    if (chance(15)) s.delivery = pick(['at-least-once', 'at-most-once']);
    if (chance(20)) s.meta = { team: pick(['x', 'y']) };
    if (periodic && chance(20)) s.catchup = pick(['skip', 'once', 'all']);
    if (periodic && chance(15)) s.catchupWindow = pick(['1h', HOUR * 3]);
    // jitter hashes the absolute slot: under SLACK_MS, the backends' nows a few ms apart still compare
    if (periodic && chance(15)) s.jitter = pick([1000, '2s']);
    if (periodic && chance(20)) s.startAt = instant(random(30) - 5);
    if (periodic && chance(15)) s.endAt = instant(10 + random(300));
    if (chance(50)) s.ifExists = pick(['error', 'replace', 'keep']);
    if (chance(20)) {
      const field = pick(Object.keys(BAD));
      s[field] = pick(BAD[field]);
    }
    if (chance(3)) s.every = s.every ?? '1h'; // two schedules
    return s as unknown as TimerSpec;
  };

  const requestIds = ['r1', 'r2', 'r3'];
  // `parts`: some writes are part of a caller's request of several calls (WriteOptions.partOf, the HTTP
  // API's PUT), whose id may be another call's (drawn only then: the seeds without it draw as before)
  const whole = () => ({ requestId: pick([...requestIds, 'w']), operation: 'PUT', args: [pick([1, 2])] });
  const options = () =>
    chance(15)
      ? {
          requestId: pick(requestIds),
          ...(chance(20) && { unlessAnswered: pick(requestIds) }),
          ...(parts && chance(50) && { partOf: whole() }),
        }
      : undefined;
  // The keys each request id's schedule and scheduleMany calls named. An unlessAnswered naming a schedule
  // request of another key has no contract (docs/spec.md §5.1: Redis may count it in the key's partition,
  // the engine does not): such a call is made without it (no draw: the other calls stay as they were).
  const scheduled = new Map<string, unknown[]>();
  const note = (o: ReturnType<typeof options>, keys: unknown[]) =>
    o && scheduled.set(o.requestId, [...(scheduled.get(o.requestId) ?? []), ...keys]);
  const ownKey = (o: ReturnType<typeof options>, key: unknown) => {
    note(o, [key]);
    const other = o?.unlessAnswered && scheduled.get(o.unlessAnswered)?.some((named) => named !== key);
    return other ? { ...o, unlessAnswered: undefined } : o;
  };
  const when = () =>
    chance(50)
      ? { delay: pick([HOUR * (1 + random(48)), '3h', '2d', -1, 'x']) }
      : { at: pick([instant(1 + random(100)), 'not a time', '2026-12-01T00:00:00']) };
  // mostly past ranges of a few slots (which run: the suite lets them end); some the timer refuses
  const range = () => {
    const from = -2 - random(40);
    const to = pick([from + random(3), from + random(3), Math.min(-1, from + random(8)), 'x', from - 2, 5]);
    return { from: instant(from), to: typeof to === 'number' ? instant(to) : to };
  };
  const list = () => {
    const o: Record<string, unknown> = {};
    if (chance(50)) o.prefix = pick(['g:', 'g:x:', 'a', 'zz', 'a b']);
    if (chance(40)) o.limit = pick([1, 2, 3, 0, 1001]);
    if (chance(25)) o.status = pick(['pending', 'paused', 'running', 'completed', 'nope']);
    if (chance(15)) o.dueBefore = base + HOUR * random(400);
    if (chance(10)) o.cursor = pick(['a', 'zzz', 5]);
    return o;
  };

  const calls: Call[] = [];
  // a write with a request id is sometimes sent again at once: the retry answers as the first call
  const add = (text: string, run: Call['run'], runs?: boolean, dueOrder?: boolean) => {
    calls.push({ text, run, runs, dueOrder });
    if (/requestId/.test(text) && chance(30)) calls.push({ text: `again ${text}`, run, runs });
  };
  for (let i = 0; i < count; i += 1) {
    const k = key();
    const o = options();
    const show = (value: unknown) => JSON.stringify(value)?.slice(0, 160);
    switch (random(23)) {
      case 22: {
        // a timer that ends at its first run, kept: the calls after it meet an ended row
        const kept = { key: k, handler: 'work', every: '1d', maxRuns: 1, removeOnComplete: false } as const;
        const s = { ...kept, ifExists: 'replace' as const, payload: chance(40) ? { fail: 'no' } : null };
        add(`schedule(${show(s)})`, (b) => b.timers.schedule(s));
        add(`trigger(${k})`, (b) => b.timers.trigger(k), true);
        break;
      }
      case 20:
      case 21:
      case 0:
      case 1:
      case 2:
      case 3: {
        const s = spec();
        const own = ownKey(o, s.key);
        add(`schedule(${show(s)}, ${show(own)})`, (b) => b.timers.schedule(s, own));
        break;
      }
      case 4: {
        const specs = Array.from({ length: 1 + random(4) }, spec) as unknown[];
        if (chance(10)) specs.push(pick([null, 'x', []]));
        // over 100 specs (Redis: a call per 100 and partition), one of them maybe wrong or live
        const many = (n: number) => ({ key: `m:${n}`, handler: 'work', delay: `${1 + (n % 9)}h` });
        if (chance(12)) specs.splice(0, 0, ...Array.from({ length: 150 }, (_, n) => many(n)));
        if (specs.length > 150 && chance(50)) specs[120 + random(20)] = pick([{ key: KEYS[0] }, spec()]);
        note(
          o,
          specs.map((spec) => (spec as { key?: unknown } | null)?.key),
        );
        add(`scheduleMany(${specs.length}: ${show(specs.slice(-5))})`, (b) =>
          b.timers.scheduleMany(specs as TimerSpec[], o),
        );
        break;
      }
      case 5:
      case 6:
      case 9:
      case 10:
      case 11: {
        const op = pick(['cancel', 'cancelOutcome', 'pause', 'resume', 'trigger'] as const);
        add(`${op}(${k})`, (b) => b.timers[op](k, o), op === 'trigger');
        break;
      }
      case 7: {
        const scope = pick([undefined, '', 'g:', 'g:x:', 'zz', 'a b', 'm:1']);
        if (chance(40)) add(`cancelAll(${scope})`, (b) => b.timers.cancelAll(scope, o));
        break;
      }
      case 8: {
        const w = when();
        // a past `at` is due at once: its run, if any, ends on both before the next call
        const past = chance(12) ? { at: instant(-3) } : w;
        add(`reschedule(${k}, ${show(past)})`, (b) => b.timers.reschedule(k, past as never, o), past !== w);
        break;
      }
      case 12: {
        const r = range();
        add(`backfill(${k}, ${show(r)})`, (b) => b.timers.backfill(k, r, o), true);
        break;
      }
      case 13:
      case 14:
        add(`get(${k})`, (b) => b.timers.get(k));
        break;
      case 15: {
        const l = list();
        const page = chance(40);
        const listing = async (b: Side) => {
          b.query = page && b.cursor ? { ...l, cursor: b.cursor } : l;
          const answer = await b.timers.list(b.query);
          b.cursor = answer.nextCursor;
          return answer;
        };
        add(`list(${page ? 'the next page, ' : ''}${show(l)})`, listing, false, l.dueBefore !== undefined);
        break;
      }
      case 16: {
        const n = pick([undefined, { limit: 2 }, { count: 3 }, { count: 0 }]);
        add(`describe(${k}, ${show(n)})`, (b) => b.timers.describe(k, n as never));
        const l = pick([undefined, { limit: 3 }, { limit: 0 }]);
        add(`history(${k}, ${show(l)})`, (b) => b.timers.history(k, l));
        break;
      }
      case 17: {
        const n = pick([undefined, { count: 3 }, { count: 100 }, { count: 101 }]);
        add(`next(${k}, ${show(n)})`, (b) => b.timers.next(k, n));
        break;
      }
      case 18: {
        const s = spec();
        const n = pick([undefined, { count: 4 }, { count: 100 }]);
        add(`preview(${show(s)}, ${show(n)})`, (b) => b.timers.preview(s, n));
        break;
      }
      default: {
        const ordinal = random(8);
        add(`check(#${ordinal})`, (b) => b.timers.check(b.id(ordinal)));
        add('snapshot()', async (b) => ({ ids: await b.timers.snapshot() }));
      }
    }
  }
  return calls;
}
