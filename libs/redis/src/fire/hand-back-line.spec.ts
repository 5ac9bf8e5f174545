import { HAND_BACK_KEYS_NAMED, handBackLine } from './hand-back-line';

const runs = (prefix: string, count: number, atMostOnce: boolean) =>
  Array.from({ length: count }, (_, i) => ({ key: `${prefix}${i}`, atMostOnce }));

describe('handBackLine', () => {
  it('names one run, and says what becomes of it', () => {
    expect(handBackLine([{ key: 'a', atMostOnce: true }]).message).toBe(
      "Sundial worker: 1 run still going at the end of the shutdown grace, aborted and handed back; at-most-once, recorded lost (reason 'lost'), not run again: a",
    );
  });

  it(`names at most ${HAND_BACK_KEYS_NAMED} keys per delivery mode, then counts the rest`, () => {
    const { message, fields } = handBackLine([...runs('l', 25, false), ...runs('m', 2, true)]);
    expect(message).toContain(
      `run again on another worker: ${runs('l', 20, false)
        .map((run) => run.key)
        .join(', ')} and 5 more;`,
    );
    expect(message).toMatch(/^Sundial worker: 27 runs /);
    expect(message).toMatch(/not run again: m0, m1$/);
    expect(fields).toEqual({ runAgain: runs('l', 20, false).map((run) => run.key), lost: ['m0', 'm1'] });
  });

  it('an at-most-once run that never started runs again, and the line says why', () => {
    const { message, fields } = handBackLine([
      { key: 'a', atMostOnce: true, started: false },
      { key: 'b', atMostOnce: false, started: true },
      { key: 'c', atMostOnce: true, started: true },
    ]);
    expect(message).toBe(
      "Sundial worker: 3 runs still going at the end of the shutdown grace, aborted and handed back; at-least-once or not started, they run again on another worker: a, b; at-most-once, recorded lost (reason 'lost'), not run again: c",
    );
    expect(fields).toEqual({ runAgain: ['a', 'b'], lost: ['c'] });
  });
});
