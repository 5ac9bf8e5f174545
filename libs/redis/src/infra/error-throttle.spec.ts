import { VirtualClock } from '@sundial/core';
import { EventEmitter } from 'node:events';
import { ErrorThrottle, errorLogInterval } from './error-throttle';

describe('ErrorThrottle (one listener of a BullMQ connection, on a virtual clock)', () => {
  const refused = new Error('connect ECONNREFUSED 127.0.0.1:6390');

  function throttled() {
    const clock = new VirtualClock(0);
    const lines: string[] = [];
    const log = {
      error: (m: string) => void lines.push(`E ${m}`),
      info: (m: string) => void lines.push(`I ${m}`),
    };
    return { clock, lines, throttle: new ErrorThrottle('queue', log, clock) };
  }

  it('logs the first error, then one count line an interval, then the recovery', async () => {
    const { clock, lines, throttle } = throttled();
    throttle.error(refused);
    for (let i = 0; i < 20; i++) {
      await clock.advance(1_000); // an attempt a second for 20 s: none logged
      throttle.error(refused);
    }
    expect(lines).toEqual(['E queue: connect ECONNREFUSED 127.0.0.1:6390']);
    for (let i = 0; i < 10; i++) {
      await clock.advance(1_000);
      throttle.error(new Error('connect ETIMEDOUT'));
    }
    expect(lines.slice(1)).toEqual([
      `E queue: still failing, 30 errors not logged in ${errorLogInterval.ms} ms; the last: connect ETIMEDOUT`,
    ]);
    await clock.advance(500);
    throttle.error(refused);
    throttle.recovered();
    throttle.recovered(); // every later ready: nothing to say
    expect(lines.slice(2)).toEqual(['I queue: connected again (1 errors not logged since the last line)']);
  });

  it('says nothing on a ready without errors before it; a new run of errors starts over', async () => {
    const { clock, lines, throttle } = throttled();
    throttle.recovered();
    expect(lines).toEqual([]);
    throttle.error(refused);
    throttle.recovered();
    await clock.advance(1);
    throttle.error(new Error('Connection is closed.'));
    expect(lines).toEqual([
      'E queue: connect ECONNREFUSED 127.0.0.1:6390',
      'I queue: connected again',
      'E queue: Connection is closed.',
    ]);
  });

  it('starts over after an interval without errors (one of another kind, with no ready between)', async () => {
    const { clock, lines, throttle } = throttled();
    throttle.error(refused);
    await clock.advance(1_000);
    throttle.error(refused); // counted
    await clock.advance(errorLogInterval.ms);
    throttle.error(new Error('Missing lock for job 7'));
    expect(lines).toEqual([
      'E queue: connect ECONNREFUSED 127.0.0.1:6390',
      'E queue: Missing lock for job 7 (1 earlier errors not logged)',
    ]);
  });

  it('watched from a first error (its connection already lost), logs no recovery until a ready', async () => {
    const { lines, throttle } = throttled();
    // a BullMQ Worker whose connection was ready long ago and is now reconnecting
    const client = Object.assign(new EventEmitter(), { status: 'reconnecting' });
    const source = { getBackend: () => ({ client: Promise.resolve(client) }) };
    throttle.recoversWith(source, 'error').error(refused);
    await Promise.resolve(); // the client's promise settles
    expect(lines).toEqual(['E queue: connect ECONNREFUSED 127.0.0.1:6390']);
    client.status = 'ready';
    client.emit('ready');
    expect(lines.slice(1)).toEqual(['I queue: connected again']);
  });

  it('held by a start: counts its errors, forgets them if it recovers, logs the first after it', async () => {
    // Before: each queue logged its first error during the boot's wait for Redis, which says it itself.
    const { lines, throttle } = throttled();
    let endStart: () => void = () => undefined;
    const start = new Promise<void>((resolve) => (endStart = resolve));
    throttle.holdUntil(start);
    throttle.error(refused);
    throttle.recovered(); // back during the start: nothing to say
    throttle.error(refused);
    throttle.error(refused);
    expect(lines).toEqual([]);
    endStart();
    await start;
    throttle.error(refused); // still failing after the start: said, with what was held
    throttle.recovered();
    expect(lines).toEqual([
      'E queue: connect ECONNREFUSED 127.0.0.1:6390 (2 earlier errors not logged)',
      'I queue: connected again',
    ]);
  });
});
