import { type CallRecord, type CommandRecord, parseMonitor, splitSlowest } from './call-split';

// Redis 7.0's MONITOR: a command as it starts, a script's redis.calls as they run (epoch s.µs).
const MONITOR = [
  'OK',
  '1000.000000 [0 127.0.0.1:7001] "fcall" "sundial_take_due_0123456789abcdef" "1" "sundial:{p0}:"',
  '1000.000100 [0 lua] "ZRANGE" "sundial:{p0}:due" "0" "100"',
  '1000.005000 [0 lua] "ZADD" "sundial:{p0}:armed" "1" "k"',
  '1000.005100 [0 127.0.0.1:7002] "fcall" "sundial_cancel_0123456789abcdef" "1" "sundial:{p0}:" "k"',
  '1000.005300 [0 lua] "DEL" "sundial:{p0}:t:k"',
  '1000.005400 [0 127.0.0.1:7003] "evalsha" "69666e69aaaaaaaa" "1" "bull:q:id"',
].join('\n');

/** A one-command cancel on connection 7002, in epoch µs after 1000 s. */
function cancelCall(issued: number, sent: number, replied: number, answered: number) {
  const command: CommandRecord = {
    name: 'fcall',
    port: 7002,
    sent: 1000e6 + sent,
    replied: 1000e6 + replied,
  };
  const call: CallRecord = {
    op: 'cancel',
    issued: 1000e6 + issued,
    answered: 1000e6 + answered,
    commands: [command],
  };
  return { command, call };
}

describe('call split (bench diagnostics)', () => {
  it('reads MONITOR: a script runs from its line to its last inner command, named by function or sha', () => {
    expect(parseMonitor(MONITOR)).toEqual([
      { start: 1000e6, end: 1000e6 + 5000, port: 7001, name: 'take_due' },
      { start: 1000e6 + 5100, end: 1000e6 + 5300, port: 7002, name: 'cancel' },
      { start: 1000e6 + 5400, end: 1000e6 + 5400, port: 7003, name: 'evalsha 69666e69' },
    ]);
  });

  it("puts a call's time on the client, Redis's queue (behind what), Redis and the reply", () => {
    const { command, call } = cancelCall(800, 1000, 7300, 7400);
    const lines = splitSlowest([call], [command], MONITOR, [[1000e6 + 6000, 1000e6 + 6500]]);
    expect(lines[0]).toBe(
      'slowest 1% (1 calls ≥ 6.60 ms, 0 reschedules), mean 6.60 ms = before the write 0.20 + ' +
        "in Redis's queue 4.10 + Redis running it 0.20 + reply to the bench 2.00 + between commands 0.00 + " +
        'after the reply 0.10',
    );
    expect(lines[1]).toBe('  Redis ran while they queued (ms per call): take_due 4.00, (nothing) 0.10');
    expect(lines[2]).toBe('  overlapped by GC pauses of the bench process: 0.50 ms per call');
  });

  it('matches commands to MONITOR per connection in order, skipping what ran there before the trace', () => {
    const early = '999.000000 [0 127.0.0.1:7002] "fcall" "sundial_cancel_0123456789abcdef" "1" "x" "old"';
    const { command, call } = cancelCall(5000, 5000, 5500, 5500);
    const [first] = splitSlowest([call], [command], `${early}\n${MONITOR}`, []);
    expect(first).toContain("in Redis's queue 0.10 + Redis running it 0.20 + reply to the bench 0.20");
  });
});
