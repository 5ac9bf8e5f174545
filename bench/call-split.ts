/** One ioredis command of a traced call: epoch µs it was written and its reply read; its socket's port. */
export interface CommandRecord {
  name: string;
  port?: number;
  sent: number;
  replied?: number;
}

/** One measured call (epoch µs): when the caller issued it, when its await resumed, its commands. */
export interface CallRecord {
  op: string;
  issued: number;
  answered?: number;
  commands: CommandRecord[];
}

/** A command as Redis ran it (MONITOR): start, last inner command of its script, client, name. */
interface Executed {
  start: number;
  end: number;
  port?: number;
  name: string;
}

type Interval = readonly [start: number, end: number];

const LINE = /^(\d+)\.(\d{6}) \[\d+ ([^\]]+)\] "([^"]*)"(?: "([^"]*)")?/;

/**
 * Redis's MONITOR lines, in the order it ran them. Redis 7.0 prints a command as it starts it and a
 * script's `redis.call`s (`[0 lua]`) as they run, so a script ends at about its last inner command.
 * Scripts are named by function (Sundial's `sundial_<name>_<hash>`) or by sha.
 */
export function parseMonitor(text: string): Executed[] {
  const executed: Executed[] = [];
  for (const line of text.split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const [, seconds, micros, client, command, first = ''] = match;
    const at = Number(seconds) * 1e6 + Number(micros);
    const last = executed[executed.length - 1];
    if (client === 'lua') {
      if (last) last.end = at;
      continue;
    }
    const lower = command.toLowerCase();
    let name = lower;
    if (lower === 'fcall' || lower === 'fcall_ro') name = first.replace(/^sundial_|_[0-9a-f]{8,}$/g, '');
    else if (lower === 'evalsha') name = `evalsha ${first.slice(0, 8)}`;
    const port = Number(client.slice(client.lastIndexOf(':') + 1));
    executed.push({ start: at, end: at, port: Number.isInteger(port) ? port : undefined, name });
  }
  return executed;
}

/** Matches each traced command to its MONITOR entry: per connection, Redis runs them in the order sent. */
function align(
  commands: readonly CommandRecord[],
  executed: readonly Executed[],
): Map<CommandRecord, Executed> {
  const byPort = new Map<number | undefined, Executed[]>();
  for (const entry of executed) byPort.set(entry.port, [...(byPort.get(entry.port) ?? []), entry]);
  const matched = new Map<CommandRecord, Executed>();
  const sentByPort = new Map<number | undefined, CommandRecord[]>();
  for (const command of commands)
    sentByPort.set(command.port, [...(sentByPort.get(command.port) ?? []), command]);
  for (const [port, sent] of sentByPort) {
    // what Redis ran for this connection before the trace's first command is not the trace's
    const ran = (byPort.get(port) ?? []).filter((entry) => entry.start >= sent[0].sent);
    sent.forEach((command, index) => {
      if (ran[index]) matched.set(command, ran[index]);
    });
  }
  return matched;
}

function overlap(a: Interval, b: Interval): number {
  return Math.max(0, Math.min(a[1], b[1]) - Math.max(a[0], b[0]));
}

const PARTS = [
  'before the write',
  "in Redis's queue",
  'Redis running it',
  'reply to the bench',
  'between commands',
  'after the reply',
] as const;
type Part = (typeof PARTS)[number];

/**
 * Where the slowest 1% of calls spent their time, mean ms per call: before their first command's write
 * (the client), in Redis's queue (and what Redis ran meanwhile, by command or script, with the time it ran
 * nothing), Redis running the call's own commands, from its end to the bench reading the reply (Redis
 * writes replies after the event-loop pass; the bench's loop busy or paused), between a call's commands
 * and from the last reply to the caller resuming; and how much of the calls a GC pause of the bench
 * overlapped.
 */
export function splitSlowest(
  calls: readonly CallRecord[],
  commands: readonly CommandRecord[],
  monitorText: string,
  gcPauses: readonly Interval[],
): string[] {
  const done = calls.filter((call) => call.answered !== undefined && call.commands.length > 0);
  if (done.length === 0) return ['call split: no traced calls'];
  const executed = parseMonitor(monitorText);
  const ranAs = align(commands, executed);
  const latency = (call: CallRecord) => call.answered! - call.issued;
  const slowest = [...done]
    .sort((a, b) => latency(b) - latency(a))
    .slice(0, Math.max(1, Math.floor(done.length / 100)));
  const parts = new Map<Part, number>(PARTS.map((part) => [part, 0]));
  const add = (part: Part, micros: number) => parts.set(part, parts.get(part)! + micros);
  const ahead = new Map<string, number>();
  let gc = 0;
  let unmatched = 0;
  for (const call of slowest) {
    const sent = [...call.commands].sort((a, b) => a.sent - b.sent);
    add('before the write', sent[0].sent - call.issued);
    sent.forEach((command, index) => {
      if (index > 0) add('between commands', command.sent - (sent[index - 1].replied ?? command.sent));
      const ran = ranAs.get(command);
      if (!ran || command.replied === undefined) {
        unmatched++;
        return;
      }
      add("in Redis's queue", ran.start - command.sent);
      add('Redis running it', ran.end - ran.start);
      add('reply to the bench', command.replied - ran.end);
      let busy = 0;
      for (const other of executed) {
        if (other === ran || other.start >= ran.start) continue;
        const micros = overlap([other.start, Math.max(other.end, other.start)], [command.sent, ran.start]);
        if (micros <= 0) continue;
        busy += micros;
        ahead.set(other.name, (ahead.get(other.name) ?? 0) + micros);
      }
      ahead.set('(nothing)', (ahead.get('(nothing)') ?? 0) + Math.max(0, ran.start - command.sent - busy));
    });
    add('after the reply', call.answered! - (sent[sent.length - 1].replied ?? call.answered!));
    gc += gcPauses.reduce((sum, pause) => sum + overlap(pause, [call.issued, call.answered!]), 0);
  }
  const ms = (micros: number) => (micros / slowest.length / 1000).toFixed(2);
  const total = slowest.reduce((sum, call) => sum + latency(call), 0);
  const reschedules = slowest.filter((call) => call.op === 'reschedule').length;
  const named = [...ahead].sort((a, b) => b[1] - a[1]).slice(0, 6);
  return [
    `slowest 1% (${slowest.length} calls ≥ ${(latency(slowest[slowest.length - 1]) / 1000).toFixed(2)} ms, ` +
      `${reschedules} reschedules), ` +
      `mean ${ms(total)} ms = ${PARTS.map((part) => `${part} ${ms(parts.get(part)!)}`).join(' + ')}` +
      (unmatched ? ` (${unmatched} commands not found in MONITOR)` : ''),
    `  Redis ran while they queued (ms per call): ${named.map(([name, micros]) => `${name} ${ms(micros)}`).join(', ')}`,
    `  overlapped by GC pauses of the bench process: ${ms(gc)} ms per call`,
  ];
}
