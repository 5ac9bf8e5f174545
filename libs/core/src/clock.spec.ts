import { createRealClock, MAX_TIMEOUT_MS, realClock } from './clock';

describe('realClock', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('reads the time from Date.now()', () => {
    expect(realClock.now()).toBe(1_000_000);
  });

  it('fires a short wait once, at its time', () => {
    const fired = jest.fn();
    realClock.setTimeout(fired, 500);
    jest.advanceTimersByTime(499);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('takes a wait longer than 2^31-1 ms in pieces instead of firing at once', () => {
    const fired = jest.fn();
    const wait = MAX_TIMEOUT_MS + 5_000;
    realClock.setTimeout(fired, wait);
    jest.advanceTimersByTime(1_000);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(wait - 1_001);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('arms one piece at a time, each at most the chunk size', () => {
    const clock = createRealClock(100);
    const fired = jest.fn();
    clock.setTimeout(fired, 250);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(200);
    expect(jest.getTimerCount()).toBe(1);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(49);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('clears a split wait whichever piece is armed', () => {
    const clock = createRealClock(100);
    const fired = jest.fn();
    const handle = clock.setTimeout(fired, 250);
    jest.advanceTimersByTime(150);
    clock.clearTimeout(handle);
    jest.advanceTimersByTime(1_000);
    expect(fired).not.toHaveBeenCalled();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('treats a negative wait as zero and ignores handles it did not make', () => {
    const fired = jest.fn();
    realClock.setTimeout(fired, -10);
    realClock.clearTimeout({});
    jest.advanceTimersByTime(0);
    expect(fired).toHaveBeenCalledTimes(1);
  });
});
