import type { Completion, FireCommands } from '../store/fire-commands';
import type { CompleteReply } from '../store/replies';
import { CompletionBatcher } from './completion-batcher';

/** A fake connection's complete calls: which runs each carried (`*`: with its claim's copy). */
function connection(name: string, calls: string[]) {
  return {
    complete: (_partition: number, completions: Completion[]) => {
      calls.push(`${name}:${completions.map((c) => c.key + (c.claim ? '*' : '')).join(',')}`);
      return Promise.resolve(completions.map((): CompleteReply => ({ kind: 'done', missed: 0, overlap: 0 })));
    },
  } as unknown as FireCommands;
}

/** A connection whose complete calls stay on their way until the test calls their `answers` entry. */
function answeredByHand(calls: string[], answers: (() => void)[]) {
  return {
    complete: (_partition: number, completions: Completion[]) => {
      calls.push(completions.map((c) => c.key).join(','));
      return new Promise<CompleteReply[]>((resolve) =>
        answers.push(() => resolve(completions.map(() => ({ kind: 'done', missed: 0, overlap: 0 })))),
      );
    },
  } as unknown as FireCommands;
}

function completion(key: string, copied = false): Completion {
  return {
    ...(copied && { claim: { leaseEnd: 1, due: '1', scheduledAt: '0', kept: '', workerId: 'w' } }),
    id: `id-${key}`,
    key,
    version: 1,
    runCount: 1,
    mode: 'held',
    outcome: 'ok',
    missed: 0,
    overlap: 0,
  };
}

describe('CompletionBatcher', () => {
  let calls: string[];
  let commands: FireCommands;
  let claims: FireCommands;
  beforeEach(() => {
    jest.useFakeTimers();
    calls = [];
    commands = connection('commands', calls);
    claims = connection('claims', calls);
  });
  afterEach(() => jest.useRealTimers());

  const batcher = (rides: boolean) =>
    new CompletionBatcher(commands, { memoryMs: 60_000, keepTrying: () => true, rides });
  /** A batcher whose calls stay on their way until the test calls their `answers` entry. */
  const byHand = () => {
    const answers: (() => void)[] = [];
    const b = new CompletionBatcher(answeredByHand(calls, answers), {
      memoryMs: 60_000,
      keepTrying: () => true,
    });
    return { b, answers };
  };

  it('sends what settled within the linger (5 ms) as one call on the command connection', async () => {
    const b = batcher(false);
    const done = [b.complete(0, completion('a')), b.complete(0, completion('b'))];
    jest.advanceTimersByTime(4);
    b.ride(claims); // no rides: nothing goes with a claim
    expect(calls).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(calls).toEqual(['commands:a,b']);
    await expect(Promise.all(done)).resolves.toHaveLength(2);
  });

  it('with rides: a batch past its linger goes with the next claim call, not before its linger', async () => {
    const b = batcher(true);
    const done = b.complete(0, completion('a'));
    jest.advanceTimersByTime(4);
    b.ride(claims);
    expect(calls).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(calls).toEqual([]); // ripe: waits for a claim
    const late = b.complete(0, completion('b'));
    b.ride(claims);
    expect(calls).toEqual(['claims:a,b']);
    await expect(done).resolves.toEqual({ kind: 'done', missed: 0, overlap: 0 });
    await late;
    jest.advanceTimersByTime(20);
    expect(calls).toEqual(['claims:a,b']); // nothing left to send alone
  });

  it('with rides: a batch no claim call takes goes alone one linger later', () => {
    const b = batcher(true);
    void b.complete(0, completion('a'));
    void b.complete(1, completion('b'));
    jest.advanceTimersByTime(9);
    expect(calls).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(calls).toEqual(['commands:a', 'commands:b']);
  });

  it('what settles while a call is on its way goes when its own linger is over, not when the call returns', async () => {
    const { b, answers } = byHand();
    void b.complete(0, completion('a'));
    jest.advanceTimersByTime(5);
    expect(calls).toEqual(['a']);
    void b.complete(0, completion('b')); // its linger runs to 5 ms from now
    jest.advanceTimersByTime(1);
    answers[0]();
    await Promise.resolve();
    expect(calls).toEqual(['a']); // not at once: one call for 'b' and what else settles by then
    void b.complete(0, completion('c'));
    jest.advanceTimersByTime(4);
    expect(calls).toEqual(['a', 'b,c']);
  });

  it('what waited past its linger while a call was on its way goes when the call returns', async () => {
    const { b, answers } = byHand();
    void b.complete(0, completion('a'));
    jest.advanceTimersByTime(5);
    void b.complete(0, completion('b'));
    jest.advanceTimersByTime(5); // b's linger is over; its partition's call is still on its way
    expect(calls).toEqual(['a']);
    answers[0]();
    await Promise.resolve();
    expect(calls).toEqual(['a', 'b']);
  });

  it('sends claim copies only in a call that carries three or more (fewer cost more than the rows read)', () => {
    const b = batcher(false);
    void b.complete(0, completion('a', true));
    void b.complete(0, completion('b', true));
    void b.complete(0, completion('c'));
    void b.complete(1, completion('d', true));
    void b.complete(1, completion('e', true));
    void b.complete(1, completion('f', true));
    jest.advanceTimersByTime(5);
    expect(calls).toEqual(['commands:a,b,c', 'commands:d*,e*,f*']);
  });

  it("counts each completion in the runner's flight from its settling until its call is answered", async () => {
    const { b, answers } = byHand();
    const room = () => b.flight.room(0, () => undefined);
    const limit = 500; // RUN_FLIGHT_LIMIT
    const ends = Array.from({ length: limit }, (_, i) => b.complete(0, completion(`k${i}`)));
    expect(room()).toBe(false); // settled, not yet sent: the claims wait
    jest.advanceTimersByTime(5);
    expect(calls).toHaveLength(3); // three calls of 100 on their way, the rest waiting for them
    answers[0]();
    await ends[0];
    expect(room()).toBe(true); // the answered 100 are out
    expect(b.flight.room(1, () => undefined)).toBe(true);
  });

  it('sends full batches while a call is on its way, three calls at most; a partial batch waits for them', async () => {
    const { b, answers } = byHand();
    for (let i = 0; i < 350; i++) void b.complete(0, completion(`k${i}`));
    jest.advanceTimersByTime(5);
    expect(calls.map((call) => call.split(',').length)).toEqual([100, 100, 100]);
    answers[0]();
    await Promise.resolve();
    await Promise.resolve();
    expect(calls).toHaveLength(3); // the 50 left are no full batch: they wait for the calls on their way
    answers[1]();
    answers[2]();
    await Promise.resolve();
    await Promise.resolve();
    expect(calls.map((call) => call.split(',').length)).toEqual([100, 100, 100, 50]);
  });
});
