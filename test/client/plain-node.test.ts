import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  childOutput,
  type ChildOutput,
  ensureBuilt,
  type ErrorBody,
  type HttpClient,
  httpClient,
  type OutsideApp,
  outsideApp,
  type RedisServer,
  ROOT,
  spawnOwned,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';

/**
 * A plain Node.js service (node:http, no Nest) on @sundial/redis, as docs/spec.md §5.5 and README "Across
 * processes: Redis" tell a newcomer (test/fixtures/plain-node/service.ts): compiled with the user's strict
 * tsc against the libraries as `npm install` copies them (test/client/outside-app.test.ts), then run on
 * Redis: timers scheduled, rescheduled and cancelled over its routes run in its own TimerRunner, a limit's
 * refusal names the option the service set, prom-client serves the metrics, SIGTERM drains and the
 * process exits by itself; without a dispatcher nothing runs and only the overdue gauge says so.
 */
const SETUP_DEADLINE_MS = 120_000;
interface Service extends ChildOutput {
  child: ChildProcess;
  api: HttpClient;
  url: string;
}

describe('a plain Node.js service on @sundial/redis', () => {
  let redis: RedisServer;
  let outside: OutsideApp;
  let app: string;
  let tsc: OutsideApp['tsc'];
  const services: Service[] = [];

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    const service = readFileSync(join(ROOT, 'test/fixtures/plain-node/service.ts'), 'utf8');
    outside = outsideApp(['core', 'redis'], { 'service.ts': service });
    ({ app, tsc } = outside);
  }, SETUP_DEADLINE_MS);

  afterEach(async () => {
    for (const service of services) service.child.kill('SIGKILL');
    await Promise.all(services.splice(0).map((service) => service.ended));
  });

  afterAll(async () => {
    await redis?.stop();
    outside?.remove();
  });

  async function start(env: Record<string, string> = {}): Promise<Service> {
    const child = spawnOwned(process.execPath, [join(app, 'dist', 'service.js')], {
      cwd: app,
      env: { ...process.env, ...env, REDIS_URL: redis.url, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = childOutput(child);
    const port = await waitFor(() => output.lines.map(portOf).find((found) => found !== undefined), {
      what: 'the service to listen',
      timeoutMs: 30_000,
    }).catch((error: Error) => {
      child.kill('SIGKILL');
      throw new Error(`${error.message}\n${output.lines.join('\n')}`);
    });
    const url = `http://127.0.0.1:${port}`;
    const service = { child, ...output, url, api: httpClient(url) };
    services.push(service);
    return service;
  }

  const records = (service: Service, msg: string): { key: string }[] =>
    service.lines.flatMap((line) => {
      const record = parsed(line);
      return record?.msg === msg ? [record as { key: string }] : [];
    });

  it("compiles with the user's strict tsc", () => {
    expect(tsc.output).toBe('');
    expect(tsc.status).toBe(0);
  });

  it('runs what it schedules and reschedules, not what it cancels; refusals name its option; metrics', async () => {
    const service = await start();
    const timer = (key: string, delay: number) => ({ key, handler: 'greet.send', delay, payload: { key } });
    expect((await service.api('POST', '/timers', timer('greet:a', 100))).status).toBe(201);
    expect((await service.api('POST', '/timers', timer('greet:b', 3_600_000))).status).toBe(201);
    expect((await service.api('POST', '/timers', timer('greet:c', 3_600_000))).status).toBe(201);
    expect((await service.api('PATCH', '/timers/greet%3Ab', { delay: 100 })).status).toBe(200);
    expect(await service.api('DELETE', '/timers/greet%3Ac')).toMatchObject({ body: { cancelled: true } });
    await waitFor(() => records(service, 'ran').length === 2, { what: 'a and b to run' });
    expect(
      records(service, 'ran')
        .map((run) => run.key)
        .sort(),
    ).toEqual(['greet:a', 'greet:b']);
    expect((await service.api('GET', '/timers/greet%3Ac')).body).toBeNull();

    const refused = await service.api<ErrorBody>('POST', '/timers', {
      ...timer('greet:big', 100),
      payload: 'x'.repeat(2000),
    });
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({ reason: 'payload-too-large', field: 'payload' });
    // the service set `limits` on RedisTimers; it reads no SUNDIAL_MAX_PAYLOAD_BYTES
    expect(refused.body.error.fix).toMatch(/raise the limits\.maxPayloadBytes option\.$/);

    // A run is counted once its outcome is recorded, after its handler logged `ran` (a loaded CI host
    // read the metrics between the two): waited for, then read whole.
    const ran = 'sundial_runs_total{handler="greet.send",status="ok"} 2';
    const metrics = await waitFor(
      async () => {
        const body = (await service.api<string>('GET', '/metrics')).body;
        return body.includes(ran) ? body : undefined;
      },
      { what: 'both runs counted' },
    );
    expect(metrics).toContain(ran);
    expect(metrics).toContain('sundial_timers_scheduled_total{kind="once"} 3');
    expect(metrics).toContain('sundial_timers_pending{partition="0"} 0');
  });

  it('without a dispatcher a due timer never runs: the overdue gauge is what says so', async () => {
    const service = await start({ FIRE: 'off' });
    await service.api('POST', '/timers', { key: 'lonely:1', handler: 'greet.send', delay: 10 });
    await waitFor(
      async () =>
        (await service.api<string>('GET', '/metrics')).body.includes(
          'sundial_timers_overdue{partition="0"} 1',
        ),
      { what: 'the timer to count as overdue' },
    );
    expect((await service.api('GET', '/timers/lonely%3A1')).body).toMatchObject({ status: 'pending' });
    expect(records(service, 'ran')).toEqual([]);
    await service.api('DELETE', '/timers/lonely%3A1');
  });

  it('on SIGTERM drains: a run past the grace is aborted, everything closes and the process exits by itself', async () => {
    const service = await start({ GRACE_MS: '300' });
    await service.api('POST', '/timers', { key: 'slow:1', handler: 'slow.work', delay: 50 });
    await waitFor(() => records(service, 'started').length === 1, { what: 'the slow run to start' });
    service.child.kill('SIGTERM');
    let deadline: NodeJS.Timeout | undefined;
    const end = await Promise.race([
      service.ended,
      // a deadline, not a wait: the race ends when the process does (in ~0.3 s, its grace); cleared
      // then, as it held the jest process up 15 s after the suite
      new Promise((resolve) => (deadline = setTimeout(resolve, 15_000, 'still running'))),
    ]);
    clearTimeout(deadline);
    expect({ end, lines: service.lines.filter((line) => parsed(line) === undefined) }).toEqual({
      end: { code: 0, signal: null },
      lines: [],
    });
    expect(records(service, 'closed')).toHaveLength(1);
  });
});

function parsed(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function portOf(line: string): number | undefined {
  const record = parsed(line);
  return record?.msg === 'plain service listening' && typeof record.port === 'number'
    ? record.port
    : undefined;
}
