import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AppProcess, DIST, killAll, spawnApp } from '@sundial/testing/harness';

/** The order docs/operations.md "Upgrading" rolls in, or the reverse. */
export type RollOrder = 'workers first' | 'schedulers first';

/** One call the `http` handler made: the timer's key and when it came (ms). */
interface Call {
  key: string;
  at: number;
}

/** Every timer kind, created on the old release; `due` in ms from their creation. */
const ONE_SHOTS = [
  { key: 'once-soon', due: 25_000, delivery: 'at-most-once' },
  { key: 'once-mid', due: 50_000, delivery: 'at-least-once' },
  // due after the roll back: armed by new processes, fired by old ones
  { key: 'once-late', due: 100_000, delivery: 'at-most-once' },
] as const;
const INTERVALS = [
  { key: 'every', everyMs: 10_000, delivery: 'at-least-once' },
  { key: 'every-amo', everyMs: 7_000, delivery: 'at-most-once' },
] as const;
/** Phases (ms): the old release alone, then the new one after the roll, then the old one again. */
const OLD_MS = 14_000;
const NEW_MS = 45_000;
const BACK_MS = 40_000;
/** How late a call may come and still be on time (a poll, a reconcile pass: SUNDIAL_RECONCILE_MS). */
const LATE_MS = 3_000;
/** Lines no roll may write: a loss, a writes-lost failover, a missing dispatcher, a fatal. */
const FALSE_ALARM = /lost|no sundial dispatcher|"level":"(error|fatal)"/i;

export interface RollResult {
  order: RollOrder;
  problems: string[];
}

/** Old scheduler and worker, then the new ones in `order`, then the old ones again, on one prefix. */
export async function roll(
  redisUrl: string,
  oldDist: string,
  order: RollOrder,
  prefix: string,
): Promise<RollResult> {
  const calls: Call[] = [];
  const recorder = await listen(calls);
  const origin = `127.0.0.1:${(recorder.address() as AddressInfo).port}`;
  const env = {
    REDIS_URL: redisUrl,
    SUNDIAL_PREFIX: prefix,
    SUNDIAL_PARTITIONS: '4',
    SUNDIAL_RECONCILE_MS: '2000',
    SUNDIAL_HTTP_ALLOW: origin,
  };
  const apps: AppProcess[] = [];
  const spawn = async (app: 'scheduler' | 'worker', release: 'old' | 'new') => {
    const started = await spawnApp(app, `${release} ${app}`, env, {
      dist: release === 'old' ? oldDist : DIST,
    });
    apps.push(started);
    return started;
  };
  const stop = async (app: AppProcess) => {
    app.kill('SIGTERM');
    await app.exited;
  };
  try {
    let scheduler = await spawn('scheduler', 'old');
    let worker = await spawn('worker', 'old');
    const createdAt = Date.now();
    const timers = timerBodies(`http://${origin}`, createdAt);
    for (const body of timers) {
      const reply = await scheduler.api('POST', '/v1/timers', body);
      if (reply.status !== 201) throw new Error(`creating ${body.key}: ${reply.status}`);
    }
    await scheduler.api('POST', '/v1/timers/paused/pause');
    await delay(OLD_MS); // the old release alone: the first runs, a slow one running
    if (order === 'workers first') {
      worker = await replace(worker, () => spawn('worker', 'new'), stop);
      scheduler = await replace(scheduler, () => spawn('scheduler', 'new'), stop);
    } else {
      scheduler = await replace(scheduler, () => spawn('scheduler', 'new'), stop);
      worker = await replace(worker, () => spawn('worker', 'new'), stop);
    }
    await delay(NEW_MS); // the new release alone
    const metrics = [
      await scheduler.api<string>('GET', '/metrics'),
      await worker.api<string>('GET', '/metrics'),
    ];
    worker = await replace(worker, () => spawn('worker', 'old'), stop);
    scheduler = await replace(scheduler, () => spawn('scheduler', 'old'), stop);
    await delay(BACK_MS); // rolled back: the old release alone again
    const problems = [
      ...oneShotProblems(calls, createdAt),
      ...intervalProblems(calls),
      ...(calls.some((call) => call.key === 'paused') ? ['paused: ran while paused'] : []),
      ...(calls.filter((call) => call.key === 'slow-amo').length > 1 ? ['slow-amo: ran twice'] : []),
      ...metrics.flatMap((reply) => counterProblems(String(reply.body))),
    ];
    await stop(worker);
    await stop(scheduler);
    for (const app of apps)
      for (const line of app.lines.filter((l) => FALSE_ALARM.test(l))) problems.push(`${app.name}: ${line}`);
    return { order, problems };
  } finally {
    await killAll(apps);
    recorder.close();
  }
}

/** Starts the replacement, then stops the one it replaces (a rolling deploy's surge). */
async function replace(
  running: AppProcess,
  start: () => Promise<AppProcess>,
  stop: (app: AppProcess) => Promise<void>,
): Promise<AppProcess> {
  const next = await start();
  await stop(running);
  return next;
}

function timerBodies(url: string, now: number): ({ key: string } & Record<string, unknown>)[] {
  const call = (key: string, extra: Record<string, unknown> = {}) => ({
    key,
    handler: 'http',
    payload: { url: `${url}/${key}`, timeoutMs: 60_000, ...extra },
  });
  return [
    ...ONE_SHOTS.map(({ key, due, delivery }) => ({ ...call(key), at: iso(now + due), delivery })),
    ...INTERVALS.map(({ key, everyMs, delivery }) => ({ ...call(key), every: `${everyMs}ms`, delivery })),
    { ...call('cron'), cron: '*/15 * * * * *', tz: 'UTC' },
    { ...call('paused'), every: '5s' },
    // running on the old worker when it is replaced (its answer takes 25 s)
    { ...call('slow'), at: iso(now + 8_000) },
    { ...call('slow-amo'), at: iso(now + 9_000), delivery: 'at-most-once' },
  ];
}

function oneShotProblems(calls: Call[], createdAt: number): string[] {
  return ONE_SHOTS.flatMap(({ key, due }) => {
    const at = calls.filter((call) => call.key === key).map((call) => call.at);
    if (at.length !== 1) return [`${key}: ran ${at.length} times`];
    const lateness = at[0] - (createdAt + due);
    return lateness < 0 || lateness > LATE_MS ? [`${key}: ran ${lateness} ms from its due`] : [];
  });
}

/** An interval's calls come every `everyMs` (none early, none missed); the cron's every 15 s. */
function intervalProblems(calls: Call[]): string[] {
  const periodic = [...INTERVALS, { key: 'cron', everyMs: 15_000 }];
  return periodic.flatMap(({ key, everyMs }) => {
    const at = calls.filter((call) => call.key === key).map((call) => call.at);
    const gaps = at.slice(1).map((t, n) => t - at[n]);
    const wrong = gaps.filter((gap) => gap < everyMs - LATE_MS || gap > everyMs + LATE_MS);
    return wrong.length > 0 ? [`${key}: gaps ${gaps.join(', ')} ms`] : [];
  });
}

/** A new process's loss counters must stay 0 through a roll. */
function counterProblems(metrics: string): string[] {
  return metrics
    .split('\n')
    .filter((line) => /^sundial_(redis_data_lost|redis_writes_lost|runs_lost)_total(\{.*\})? /.test(line))
    .filter((line) => Number(line.split(' ').at(-1)) !== 0);
}

/** The `http` handler's target: records each call, answers `slow*` after 25 s, the others at once. */
function listen(calls: Call[]): Promise<Server> {
  const server = createServer((request, response) => {
    const key = (request.url ?? '/').slice(1);
    calls.push({ key, at: Date.now() });
    setTimeout(() => response.end('ok'), key.startsWith('slow') ? 25_000 : 0); // the slow run's length
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function delay(ms: number): Promise<void> {
  return new Promise((wake) => setTimeout(wake, ms));
}
