import { retryDelay } from './run-policies';
import { normalizeSpec } from './validation';
import { refusalOf } from '../../../test/engine/validation-cases';

const cron = { key: 'digest', handler: 'digest.send', cron: '0 7 * * *', tz: 'UTC' };
const interval = { key: 'beat', handler: 'beat', every: '1m' };
const once = { key: 'remind', handler: 'remind', delay: '3d' };

describe('run policies: overlap, retry, pauseAfterFailures, timeout (docs/spec.md §3.2, §3.3a, §3.3b)', () => {
  it.each([
    ['overlap on a one-shot', { ...once, overlap: 'allow' }, 'overlap', /every or cron/],
    ['an overlap that is not one', { ...cron, overlap: 'buffer' }, 'overlap', /"buffer-one"/],
    [
      'awaitTask false with overlap skip',
      { ...interval, awaitTask: false, overlap: 'skip' },
      'awaitTask',
      /Remove awaitTask/,
    ],
    [
      'awaitTask true with overlap allow',
      { ...interval, awaitTask: true, overlap: 'allow' },
      'awaitTask',
      /Remove awaitTask/,
    ],
    ['retry without attempts', { ...once, retry: {} }, 'retry.attempts', /tries in all/],
    ['retry attempts 0', { ...once, retry: { attempts: 0 } }, 'retry.attempts', /tries in all/],
    ['a retry typo', { ...once, retry: { attempts: 2, backof: {} } }, 'backof', /"backoff"/],
    [
      'a backoff type typo',
      { ...once, retry: { attempts: 2, backoff: { type: 'exponentail', delay: 1 } } },
      'retry.backoff.type',
      /"exponential"/,
    ],
    [
      'a negative backoff delay',
      { ...once, retry: { attempts: 2, backoff: { type: 'fixed', delay: -1 } } },
      'retry.backoff.delay',
      /0 to "365d"/,
    ],
    [
      'maxDelay below delay',
      { ...once, retry: { attempts: 2, backoff: { type: 'exponential', delay: '1m', maxDelay: '1s' } } },
      'retry.backoff.maxDelay',
      /at least delay/,
    ],
    [
      'retry with overlap allow',
      { ...cron, overlap: 'allow', retry: { attempts: 2 } },
      'retry',
      /"skip" or "buffer-one"/,
    ],
    [
      'retry with awaitTask false',
      { ...interval, awaitTask: false, retry: { attempts: 2 } },
      'retry',
      /"skip" or "buffer-one"/,
    ],
    ['pauseAfterFailures 0', { ...cron, pauseAfterFailures: 0 }, 'pauseAfterFailures', /1 or more/],
    [
      'pauseAfterFailures on a one-shot',
      { ...once, pauseAfterFailures: 2 },
      'pauseAfterFailures',
      /every or cron/,
    ],
    [
      'pauseAfterFailures on an awaiting interval',
      { ...interval, pauseAfterFailures: 2 },
      'pauseAfterFailures',
      /overlap "allow"/,
    ],
    ['timeout 0', { ...once, timeout: 0 }, 'timeout', /how long one run may take/],
    ['a timeout over 365 days', { ...cron, timeout: '366d' }, 'timeout', /how long one run may take/],
    ['a timeout that is no duration', { ...interval, timeout: '15min' }, 'timeout', /"15m"/],
    ['a timeout that is not a number', { ...once, timeout: true }, 'timeout', /number of milliseconds/],
    ['a timeout typo', { ...once, timeut: '1m' }, 'timeut', /"timeout"/],
  ])('refuses %s with its field and a fix', (_name, spec, field, fix) => {
    expect(refusalOf(() => normalizeSpec(spec))).toMatchObject({
      reason: 'invalid',
      field,
      fix: expect.stringMatching(fix),
    });
  });

  it('applies the defaults: no overlap field unless given, a fixed 1 s backoff, awaitTask from overlap', () => {
    expect(normalizeSpec(cron)).not.toHaveProperty('overlap');
    expect(normalizeSpec({ ...cron, overlap: 'cancel-other' })).toMatchObject({
      overlap: 'cancel-other',
      awaitTask: false,
    });
    expect(normalizeSpec({ ...interval, overlap: 'allow' })).toMatchObject({ awaitTask: false });
    expect(normalizeSpec({ ...interval, overlap: 'buffer-one', awaitTask: true })).toMatchObject({
      awaitTask: true,
    });
    expect(normalizeSpec({ ...once, retry: { attempts: 3 } }).retry).toEqual({
      attempts: 3,
      backoff: { type: 'fixed', delay: 1_000 },
    });
    expect(
      normalizeSpec({
        ...cron,
        retry: { attempts: 2, backoff: { type: 'exponential', delay: '2s', maxDelay: '1m' } },
      }).retry,
    ).toEqual({ attempts: 2, backoff: { type: 'exponential', delay: 2_000, maxDelay: 60_000 } });
    expect(normalizeSpec({ ...interval, overlap: 'allow', pauseAfterFailures: 5 }).pauseAfterFailures).toBe(
      5,
    );
  });

  it('takes a timeout on every kind, in ms, and stores none unless given', () => {
    expect(normalizeSpec({ ...once, timeout: '15m' }).timeout).toBe(900_000);
    expect(normalizeSpec({ ...interval, timeout: 1 }).timeout).toBe(1);
    expect(normalizeSpec({ ...cron, timeout: '365d' }).timeout).toBe(365 * 86_400_000);
    expect(normalizeSpec({ ...cron, timeout: null })).not.toHaveProperty('timeout');
    expect(normalizeSpec(cron)).not.toHaveProperty('timeout');
  });

  it('retryDelay: fixed waits delay; exponential doubles from delay, capped at maxDelay', () => {
    const fixed = { attempts: 5, backoff: { type: 'fixed' as const, delay: 300 } };
    const exponential = { attempts: 5, backoff: { type: 'exponential' as const, delay: 100, maxDelay: 500 } };
    expect([1, 2, 3].map((attempt) => retryDelay(fixed, attempt))).toEqual([300, 300, 300]);
    expect([1, 2, 3, 4].map((attempt) => retryDelay(exponential, attempt))).toEqual([100, 200, 400, 500]);
  });
});
