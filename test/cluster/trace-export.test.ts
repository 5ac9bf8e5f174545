import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  killAll,
  type OtlpReceiver,
  type RedisServer,
  spawnApp,
  startOtlpReceiver,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';

interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

function logLines(app: AppProcess): LogLine[] {
  return app.stdout.map((line) => JSON.parse(line) as LogLine);
}

/**
 * Where an app's spans go, and what it says about them (docs/spec.md §6.4): a scheduler exporting to a
 * collector that answers 500, then 200 — the lost traces are a warn line, their return an info — and one
 * with OTEL_TRACES_EXPORTER=console, whose spans are JSON lines on stderr, its stdout JSON log lines
 * only. Their request spans are named by route.
 */
describe('cluster: span exports said, console spans on stderr', () => {
  let redis: RedisServer;
  let receiver: OtlpReceiver;
  let exporting: AppProcess;
  let consoleApp: AppProcess;

  beforeAll(async () => {
    [redis, receiver] = await Promise.all([startRedis(), startOtlpReceiver(), ensureBuilt()]);
    receiver.status = 500;
    const env = clusterEnv(redis.url, { OTEL_BSP_SCHEDULE_DELAY: '50' });
    [exporting, consoleApp] = await Promise.all([
      spawnApp('scheduler', 'exporting', {
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      }),
      spawnApp('scheduler', 'console', { ...env, OTEL_TRACES_EXPORTER: 'console' }),
    ]);
  }, 60_000); // deadline: two apps' start

  afterAll(async () => {
    await killAll([exporting, consoleApp]);
    await receiver?.close();
    await redis?.stop();
  });

  it('warns when its collector fails the exports, and says when they reach it again', async () => {
    expect((await exporting.api('GET', '/v1/timers')).status).toBe(200);
    const lost = await waitFor(
      () => logLines(exporting).find((line) => line.msg.startsWith('Traces are lost')),
      { what: 'the lost-traces warn' },
    );
    const endpoint = `${receiver.url}/v1/traces`;
    expect(lost).toMatchObject({ level: 'warn', endpoint, droppedBatches: 1 });
    expect(lost.msg).toContain(`could not be exported to ${endpoint}`);
    expect(lost.fix).toEqual(expect.stringContaining('OTEL_EXPORTER_OTLP_ENDPOINT'));
    receiver.status = 200;
    expect((await exporting.api('POST', '/v1/timers/none:here/trigger')).status).toBe(404);
    const again = await waitFor(
      () => logLines(exporting).find((line) => line.msg.startsWith('Traces are exported again')),
      { what: 'the exports-again info' },
    );
    expect(again).toMatchObject({ level: 'info', msg: `Traces are exported again to ${endpoint}` });
    expect(logLines(exporting).filter((line) => line.msg.startsWith('Traces are lost'))).toHaveLength(1);
    // The request's server span, named by its route.
    const span = await waitFor(() => receiver.spans.find((received) => received.kind === 2), {
      what: 'the trigger request’s span',
    });
    expect(span.name).toBe('POST /v1/timers/:key/trigger');
    expect(span.attributes['http.route']).toBe('/v1/timers/:key/trigger');
  });

  it('writes console spans as JSON lines on stderr, leaving stdout to the JSON log lines', async () => {
    expect((await consoleApp.api('GET', '/v1/timers')).status).toBe(200);
    const spanLine = await waitFor(
      () => consoleApp.lines.find((line) => line.includes('"span":"GET /v1/timers"')),
      { what: 'the console span line' },
    );
    expect(consoleApp.stdout).not.toContain(spanLine);
    expect(JSON.parse(spanLine)).toMatchObject({
      span: 'GET /v1/timers',
      service: 'sundial-scheduler',
      attributes: { 'http.route': '/v1/timers' },
    });
    expect(() => logLines(consoleApp)).not.toThrow();
  });
});
