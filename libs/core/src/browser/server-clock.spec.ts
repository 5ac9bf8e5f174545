import { ServerClock } from './server-clock';

describe('ServerClock: the scheduler’s now from its answers', () => {
  it('is the latest stamp against the middle of its round trip, moved on by the local clock', () => {
    let local = 1_100;
    const clock = new ServerClock(() => local);
    expect(clock.now()).toBeUndefined();
    // sent at 1000, answered at 1100 (now): the stamp 5,000,050 was taken about 1050, 50 ms ago
    clock.note('5000050', 1_000, 1_100);
    expect(clock.now()).toBe(5_000_100);
    local = 2_000;
    expect(clock.now()).toBe(5_001_000);
    clock.note('9000000', 2_000, 2_000);
    expect(clock.now()).toBe(9_000_000);
  });

  it('keeps what it had for an answer without a usable stamp (a scheduler before the header)', () => {
    const clock = new ServerClock(() => 0);
    for (const header of [undefined, null, '', 'soon', '1.5', '-3', '99999999999999999999']) {
      clock.note(header, 0, 0);
    }
    expect(clock.now()).toBeUndefined();
    clock.note('42', 0, 0);
    clock.note('later', 0, 0);
    expect(clock.now()).toBe(42);
  });
});
