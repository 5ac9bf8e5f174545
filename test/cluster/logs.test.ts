import { type AppProcess, httpClient, spawnApp, waitFor } from '@sundial/testing/harness';
import { useAppsOnPrivateRedis } from './app-fixture';

const TOKEN = 'tok-7c1d-never-logged';
const SECRETS = [TOKEN, 'payload-secret-4f2a', 'meta-secret-9e0b'];

type Line = Record<string, unknown> & { level?: string; msg?: string };

/** docs/spec.md §6.3: JSON lines through pino, request lines with redaction, timer lines with their fields. */
describe('logs', () => {
  const { redis, apps } = useAppsOnPrivateRedis();

  // after the fixture's beforeAll (Redis up, build checked): hooks run in the order they are declared
  beforeAll(async () => {
    const env = {
      REDIS_URL: redis().url,
      SUNDIAL_API_TOKEN: TOKEN,
      SUNDIAL_PARTITIONS: '2',
      LOG_LEVEL: 'debug',
    };
    apps.push(
      ...(await Promise.all([spawnApp('scheduler', 'scheduler', env), spawnApp('worker', 'worker', env)])),
    );
  }, 180_000);

  it('request lines redact the token and leave bodies out; a run’s lines carry its timer', async () => {
    const [scheduler, worker] = apps;
    const api = httpClient(scheduler.url, { authorization: `Bearer ${TOKEN}` });
    const created = await api<{ id: string; version: number }>('POST', '/v1/timers', {
      key: 'logs:1',
      handler: 'not-registered',
      delay: 0,
      payload: { secret: SECRETS[1] },
      meta: { note: SECRETS[2] },
    });
    expect(created.status).toBe(201);
    const failed = await waitFor(() => parsed(worker).find((line) => line.msg === 'run failed'), {
      what: 'the worker to log the failed run',
    });
    expect(failed).toMatchObject({
      level: 'warn',
      key: 'logs:1',
      id: created.body.id,
      version: created.body.version,
      partition: expect.any(Number),
      handler: 'not-registered',
      error: { reason: 'unknown-handler' },
    });

    const request = parsed(scheduler).find(
      (line) => (line.req as { method?: string } | undefined)?.method === 'POST',
    );
    expect(request).toMatchObject({
      level: 'info',
      msg: 'request completed',
      req: { url: '/v1/timers', headers: { authorization: '[redacted]' } },
      res: { statusCode: 201 },
      responseTime: expect.any(Number),
    });
    // Probes and scrapes are not logged (spawnApp polled /health/ready).
    expect(
      parsed(scheduler).filter((line) => String((line.req as { url?: string })?.url).startsWith('/health')),
    ).toEqual([]);

    for (const app of apps) {
      expect(app.lines.filter((line) => !isJsonObject(line))).toEqual([]);
      expect(app.lines.filter((line) => SECRETS.some((secret) => line.includes(secret)))).toEqual([]);
    }
  });
});

function parsed(app: AppProcess): Line[] {
  return app.lines.filter(isJsonObject).map((line) => JSON.parse(line) as Line);
}

function isJsonObject(line: string): boolean {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}
