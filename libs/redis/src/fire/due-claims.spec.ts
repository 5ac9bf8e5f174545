import type { ClaimResult } from '../store/claim-reply';
import type { FireCommands, TimerRef } from '../store/fire-commands';
import type { RowFields } from '../store/row';
import type { ClaimSlotContext } from './claim-slots';
import { claimAtDue } from './due-claims';
import { RunFlight } from './run-flight';

/** A claim call the test answers by hand: which timers it carried, and how to answer it. */
interface Call {
  keys: string[];
  aheadMs: number | undefined;
  answer(results?: ClaimResult[]): void;
  fail(error: Error): void;
}

/** claimAtDue against a fake claim connection and a hand-moved clock (Redis's clock as seen from here). */
function harness(clockStart: number, aheadMs = 0, flight?: RunFlight) {
  let now = clockStart;
  const calls: Call[] = [];
  const settled: string[] = [];
  const claims = {
    claim: (
      _partition: number,
      _leaseMs: number,
      _workerId: string,
      refs: TimerRef[],
      _slotsChecked?: boolean,
      ahead?: number,
    ) =>
      new Promise<ClaimResult[]>((resolve, reject) =>
        calls.push({
          keys: refs.map((ref) => ref.key),
          aheadMs: ahead,
          answer: (results) => resolve(results ?? refs.map((ref) => claimedResult(ref))),
          fail: reject,
        }),
      ),
  } as unknown as FireCommands;
  const run = (refs: TimerRef[]) =>
    claimAtDue(refs, {
      partition: 0,
      claims,
      slots: { workerId: 'w' } as ClaimSlotContext,
      clock: { now: () => now },
      leaseMs: 30_000,
      aheadMs,
      stopped: () => false,
      settle: (result, ref) => void settled.push(`${ref.key}:${result.kind}`),
      flight,
    });
  return { calls, settled, run, setNow: (at: number) => (now = at) };
}

function claimedResult(ref: TimerRef): ClaimResult {
  const fields = { id: ref.id, key: ref.key } as RowFields;
  return { kind: 'claimed', mode: 'held', due: ref.due, leftMs: 0, fields, rerun: false };
}

function ref(key: string, due: number): TimerRef {
  return { id: `id-${key}`, key, version: 1, due };
}

/** Lets the loop's promise callbacks and a 1 ms local timer run. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('claimAtDue', () => {
  it('claims a timer falling due while a claim is on its way in a call of its own, two calls at most', async () => {
    const h = harness(1000);
    const done = h.run([ref('a', 1000), ref('b', 1001), ref('c', 1002)]);
    await tick();
    expect(h.calls.map((call) => call.keys)).toEqual([['a']]);
    h.setNow(1001);
    await tick();
    // 'b' goes while 'a''s claim is unanswered
    expect(h.calls.map((call) => call.keys)).toEqual([['a'], ['b']]);
    h.setNow(1002);
    await tick();
    // two on their way: 'c' waits for an answer
    expect(h.calls).toHaveLength(2);
    h.calls[0].answer();
    await tick();
    expect(h.calls.map((call) => call.keys)).toEqual([['a'], ['b'], ['c']]);
    h.calls[1].answer();
    h.calls[2].answer();
    await done;
    expect(h.settled).toEqual(['a:claimed', 'b:claimed', 'c:claimed']);
  });

  it('claims again what Redis still found early, after the wait it reported', async () => {
    const h = harness(1000);
    const done = h.run([ref('a', 1000)]);
    await tick();
    h.calls[0].answer([{ kind: 'early', waitMs: 2 }]);
    await tick();
    expect(h.calls).toHaveLength(1);
    h.setNow(1002);
    await tick();
    expect(h.calls.map((call) => call.keys)).toEqual([['a'], ['a']]);
    h.calls[1].answer();
    await done;
    expect(h.settled).toEqual(['a:claimed']);
  });

  it('sends a claim aheadMs before its due, with that bound for Redis', async () => {
    const h = harness(1000, 5);
    const done = h.run([ref('a', 1010)]);
    h.setNow(1004);
    await tick();
    expect(h.calls).toEqual([]);
    h.setNow(1005);
    await tick();
    expect(h.calls.map((call) => [call.keys, call.aheadMs])).toEqual([[['a'], 5]]);
    h.calls[0].answer();
    await done;
    expect(h.settled).toEqual(['a:claimed']);
  });

  it('gathers with aheadMs: a call waits up to half the window for the timers that enter it meanwhile', async () => {
    const h = harness(1000, 4);
    const dues = [1010, 1011, 1012, 1013, 1016];
    const done = h.run(dues.map((due) => ref(`t${due}`, due)));
    // 't1010' is claimable from 1006; the call waits for 't1011' and 't1012', in the window by 1008
    h.setNow(1006);
    await tick();
    h.setNow(1007);
    await tick();
    expect(h.calls).toEqual([]);
    h.setNow(1008);
    await tick();
    expect(h.calls.map((call) => call.keys)).toEqual([['t1010', 't1011', 't1012']]);
    // 't1016' would not enter the window by 't1013''s half lead: 't1013' goes alone at its full lead
    h.setNow(1009);
    await tick();
    expect(h.calls).toHaveLength(2);
    expect(h.calls[1].keys).toEqual(['t1013']);
    h.calls[0].answer(); // a slot free: two calls on their way at most
    h.setNow(1012);
    await tick();
    expect(h.calls).toHaveLength(3);
    expect(h.calls[2].keys).toEqual(['t1016']);
    h.calls.slice(1).forEach((call) => call.answer());
    await done;
    expect(h.settled).toHaveLength(5);
  });

  it('claims at most 100 timers a call, all at once in a backlog: a job of 250 goes as 100, 100 and 50', async () => {
    const h = harness(1000);
    const keys = Array.from({ length: 250 }, (_, i) => `k${i}`);
    const done = h.run(keys.map((key) => ref(key, 900)));
    await tick();
    // two calls on their way per 100 timers of the job (three of 100 make room for six): none waits
    expect(h.calls.map((call) => call.keys)).toEqual([
      keys.slice(0, 100),
      keys.slice(100, 200),
      keys.slice(200),
    ]);
    for (const call of h.calls) call.answer();
    await done;
    expect(h.settled).toHaveLength(250);
  });

  it('drops a timer due more than a second ahead and ends without a claim', async () => {
    const h = harness(1000);
    await h.run([ref('a', 2001)]);
    expect(h.calls).toEqual([]);
  });

  it('rejects with a failed call once the other call on its way has settled, claiming nothing more', async () => {
    const h = harness(1000);
    const done = h.run([ref('a', 1000), ref('b', 1001), ref('c', 1003)]);
    await tick();
    h.setNow(1001);
    await tick();
    h.calls[0].fail(new Error('Redis went away'));
    await tick();
    let outcome: unknown = 'pending';
    done.catch((error: Error) => (outcome = error.message));
    await tick();
    expect(outcome).toBe('pending');
    h.calls[1].answer();
    h.setNow(1003);
    await expect(done).rejects.toThrow('Redis went away');
    expect(h.calls).toHaveLength(2);
    expect(h.settled).toEqual(['b:claimed']);
  });

  it("stops a backlog's claims while the runner holds its flight's limit of timers, going on as answers make room", async () => {
    const flight = new RunFlight(150);
    const h = harness(1000, 0, flight);
    const keys = Array.from({ length: 250 }, (_, i) => `k${i}`);
    const done = h.run(keys.map((key) => ref(key, 900)));
    await tick();
    // 100 on their way leave room: a second call goes; 200 leave none, so the third waits
    expect(h.calls.map((call) => call.keys)).toEqual([keys.slice(0, 100), keys.slice(100, 200)]);
    flight.add(0, 100); // the first call's runs ended: their completions wait on Redis too
    h.calls[0].answer();
    await tick();
    expect(h.calls).toHaveLength(2);
    flight.done(0, 100); // their completions were answered
    await tick();
    expect(h.calls.map((call) => call.keys)).toEqual([
      keys.slice(0, 100),
      keys.slice(100, 200),
      keys.slice(200),
    ]);
    h.calls[1].answer();
    h.calls[2].answer();
    await done;
    expect(h.settled).toHaveLength(250);
  });

  it("another partition's timers do not hold a partition's claims", async () => {
    const flight = new RunFlight(1);
    flight.add(1, 5);
    const h = harness(1000, 0, flight);
    const done = h.run([ref('a', 1000)]);
    await tick();
    expect(h.calls.map((call) => call.keys)).toEqual([['a']]);
    h.calls[0].answer();
    await done;
  });
});
