import type { LedgerEntry, NextTime, Preview, Timer, TimerDescription } from '@sundial/core';
import {
  type ErrorBody,
  type HttpClient,
  keyPath,
  type RedisServer,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';
import Redis from 'ioredis';
import { type RunningApp, startScheduler, startWorker } from '../local-cluster';

/** docs/spec.md §3.9 over HTTP: history, next, preview, describe (a real scheduler and worker, one Redis). */
describe('HTTP API: history, next, preview, describe', () => {
  let redis: RedisServer;
  let raw: Redis;
  let scheduler: RunningApp;
  let worker: RunningApp;
  let api: HttpClient;

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    [scheduler, worker] = await Promise.all([
      startScheduler(redis.url),
      startWorker(redis.url, {
        fail: () => {
          throw new Error('boom');
        },
      }),
    ]);
    api = scheduler.api;
  });

  afterAll(async () => {
    await Promise.all([scheduler?.close(), worker?.close()]);
    raw?.disconnect();
    await redis?.stop();
  });

  const history = async (key: string, query = '') =>
    (await api<{ key: string; entries: LedgerEntry[] }>('GET', `${keyPath(key)}/history${query}`)).body;
  // Every key but each partition's `jobs`, the dispatcher's record of its hand-offs, which the fire path
  // itself prunes in the background (a trigger's run in an earlier case left one): seen gone between a
  // refusal's two reads on a loaded host. No API call writes it.
  const keyspace = async () => (await raw.keys('*')).filter((key) => !key.endsWith(':jobs')).sort();

  it('history: a fresh timer shows its creation; a run adds armed, claimed and its outcome, newest first', async () => {
    const created = await api<Timer>('POST', '/v1/timers', { key: 'hx:1', handler: 'fail', delay: '1h' });
    expect(created.status).toBe(201);
    expect(await history('hx:1')).toEqual({
      key: 'hx:1',
      entries: [{ at: new Date(created.body.scheduledAt).toISOString(), event: 'scheduled', version: 1 }],
    });
    expect((await api('POST', `${keyPath('hx:1')}/trigger`)).status).toBe(200);
    const entries = await waitFor(async () => {
      const { entries } = await history('hx:1');
      return entries.some((entry) => entry.event === 'failed') && entries;
    });
    expect(entries.map((entry) => entry.event)).toEqual([
      'failed',
      'claimed',
      'armed',
      'triggered',
      'scheduled',
    ]);
    expect(entries[0]).toMatchObject({ version: 2, message: 'boom', workerId: expect.any(String) });
    expect(entries[1].workerId).toBe(entries[0].workerId);
    expect(await history('hx:1', '?limit=2')).toMatchObject({ entries: entries.slice(0, 2) });
  });

  it('history: limit is checked; an unknown key is not-found', async () => {
    for (const limit of ['0', '201', 'abc']) {
      const reply = await api<ErrorBody>('GET', `${keyPath('hx:1')}/history?limit=${limit}`);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ reason: 'invalid', field: 'limit', fix: expect.any(String) });
    }
    const missing = await api<ErrorBody>('GET', `${keyPath('hx:never')}/history`);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ reason: 'not-found', field: 'key' });
  });

  it('history: a cancelled timer keeps its ledger as long as its tombstone', async () => {
    await api('POST', '/v1/timers', { key: 'hx:cancel', handler: 'fail', delay: '1h' });
    expect((await api('DELETE', keyPath('hx:cancel'))).status).toBe(200);
    expect((await history('hx:cancel')).entries.map(({ event, version }) => [event, version])).toEqual([
      ['cancelled', 2],
      ['scheduled', 1],
    ]);
    const ttl = await raw.pttl('sundial:{p0}:h:hx:cancel');
    expect(ttl).toBeGreaterThan(6 * 86_400_000);
  });

  /** The wall clock of a next time in its zone, `HH:MM`, from `at` and `offset`. */
  const wall = ({ at, offset }: NextTime) => {
    const sign = offset.startsWith('-') ? -1 : 1;
    const minutes = sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
    return new Date(Date.parse(at) + minutes * 60_000).toISOString().slice(11, 16);
  };
  const offsets = (times: NextTime[]) => [...new Set(times.map((time) => time.offset))];

  it('next: a weekly cron across the March DST change in America/Toronto, each time with its offset', async () => {
    // Sundays of March only: whatever today's date, the next 10 cover the next March's spring-forward
    // Sunday (its second) with the Sunday before it.
    const spec = { key: 'nx:dst', handler: 'fail', cron: '30 2 * 3 0', tz: 'America/Toronto' };
    expect((await api<Timer>('POST', '/v1/timers', spec)).status).toBe(201);
    const { body } = await api<{ key: string; times: NextTime[] }>(
      'GET',
      `${keyPath('nx:dst')}/next?count=10`,
    );
    expect(body.key).toBe('nx:dst');
    expect(body.times).toHaveLength(10);
    // Every time is 02:30 on Toronto's wall clock but on a spring-forward Sunday, which has no 02:30: a
    // fixed time runs at the gap's end, 03:00 (docs/spec.md §3.3), a week and half an hour less after the
    // one before; -05:00 before, -04:00 from then on.
    const moved = body.times.filter((time) => wall(time) !== '02:30');
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.map(wall)).toEqual(moved.map(() => '03:00'));
    const change = body.times.lastIndexOf(moved[moved.length - 1]);
    const [before, at] = [body.times[change - 1], body.times[change]];
    expect(offsets([before, at])).toEqual(['-05:00', '-04:00']);
    expect(Date.parse(at.at) - Date.parse(before.at)).toBe(7 * 86_400_000 - 1_800_000);
    expect((await api<{ times: NextTime[] }>('GET', `${keyPath('nx:dst')}/next`)).body.times).toHaveLength(
      10,
    );
    const refused = await api<ErrorBody>('GET', `${keyPath('nx:dst')}/next?count=101`);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ reason: 'invalid', field: 'count' });
    expect((await api<ErrorBody>('GET', `${keyPath('nx:never')}/next`)).status).toBe(404);
  });

  it('preview: a cron over the DST change keeps its wall time and says each offset', async () => {
    const spec = { key: 'pv:dst', handler: 'fail', cron: '0 12 7-15 3 *', tz: 'America/Toronto' };
    const { status, body } = await api<Preview>('POST', '/v1/preview?count=9', spec);
    expect(status).toBe(200);
    expect(body.next).toHaveLength(9);
    expect(body.next.every((time) => wall(time) === '12:00')).toBe(true);
    expect(offsets(body.next)).toEqual(['-05:00', '-04:00']);
  });

  it('preview: the normalized spec and its first times; a refusal writes nothing', async () => {
    const before = await keyspace();
    const ok = await api<Preview>('POST', '/v1/preview?count=3', {
      key: 'pv:1',
      handler: 'fail',
      every: '90s',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.spec).toMatchObject({ key: 'pv:1', kind: 'interval', everyMs: 90_000, ifExists: 'error' });
    const [first, second, third] = ok.body.next.map((time) => Date.parse(time.at));
    expect([second - first, third - second]).toEqual([90_000, 90_000]);
    expect(ok.body.next.every((time) => time.offset === '+00:00')).toBe(true);
    const refused = await api<ErrorBody>('POST', '/v1/preview', {
      key: 'pv:2',
      handler: 'fail',
      cron: '0 7 * * *',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      reason: 'invalid',
      field: 'tz',
      message: expect.any(String),
      fix: expect.any(String),
    });
    expect(await keyspace()).toEqual(before);
    expect((await api('GET', keyPath('pv:1'))).status).toBe(404);
  });

  // It was taken silently, undocumented: a caller could think a preview's key was held, as a write's is.
  it('preview: an Idempotency-Key is ignored, as /docs-json says (it writes nothing; the key stays free)', async () => {
    const spec = { key: 'pv:ik', handler: 'fail', delay: '1h' };
    const headers = { 'Idempotency-Key': 'pv-ik-1' };
    const previewed = await api<Preview>('POST', '/v1/preview', spec, { headers });
    expect(previewed.status).toBe(200);
    // not recorded: the same key on a write is that write's, not a conflict with the preview
    const created = await api<Timer>('POST', '/v1/timers', { ...spec, delay: '2h' }, { headers });
    expect(created.status).toBe(201);
    const docs = await api<{ paths: Record<string, { post: { parameters?: object[] } }> }>(
      'GET',
      '/docs-json',
    );
    expect(docs.body.paths['/v1/preview'].post.parameters).toContainEqual(
      expect.objectContaining({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: expect.stringMatching(/^Ignored: a preview writes nothing/),
      }),
    );
  });

  it('describe: the row, next times, ledger and counters', async () => {
    await api('POST', '/v1/timers', { key: 'ds:1', handler: 'fail', every: '1h', maxRuns: 3 });
    await api('POST', `${keyPath('ds:1')}/pause`);
    const reply = await api<TimerDescription>('GET', `${keyPath('ds:1')}/describe?count=5&limit=1`);
    expect(reply.status).toBe(200);
    expect(reply.body.timer).toMatchObject({ key: 'ds:1', status: 'paused', version: 2 });
    expect(reply.body.next).toEqual([]);
    expect(reply.body.history).toEqual([expect.objectContaining({ event: 'paused', version: 2 })]);
    expect(reply.body.counters).toEqual({ runs: 0, failures: 0, stale: 0, skipped: 0, lost: 0, requeued: 0 });
    await api('POST', `${keyPath('ds:1')}/resume`);
    const resumed = (await api<TimerDescription>('GET', `${keyPath('ds:1')}/describe`)).body;
    expect(resumed.next).toHaveLength(3); // maxRuns 3, none run yet
    expect(resumed.history.map((entry) => entry.event)).toEqual(['resumed', 'paused', 'scheduled']);
    expect((await api<ErrorBody>('GET', `${keyPath('ds:never')}/describe`)).status).toBe(404);
  });

  /**
   * docs/spec.md §2 "Validation and errors": a refusal's message names the field and the value as it was
   * sent. A query number that is not one (`limit=abc`, `count=`) was shown as NaN, and a body that is
   * JSON but not an object (`null`, `42`) was called "not valid JSON" by the body parser.
   */
  describe('refusals name the value sent', () => {
    const timer = keyPath('rv:1');
    const spec = JSON.stringify({ key: 'rv:2', handler: 'log', every: '1h' });
    // [method, path, body (raw text), the error's field, its message]
    const cases: [string, string, string | undefined, string | undefined, string][] = [
      ['GET', '/v1/timers?limit=abc', undefined, 'limit', 'limit "abc" is not a whole number from 1 to 1000'],
      ['GET', '/v1/timers?limit=', undefined, 'limit', 'limit "" is not a whole number from 1 to 1000'],
      // Number() read these as 16, 100 and 5: what the OpenAPI document calls an integer is decimal digits
      [
        'GET',
        '/v1/timers?limit=0x10',
        undefined,
        'limit',
        'limit "0x10" is not a whole number from 1 to 1000',
      ],
      ['GET', '/v1/timers?limit=1e2', undefined, 'limit', 'limit "1e2" is not a whole number from 1 to 1000'],
      [
        'GET',
        `${timer}/next?count=%205`,
        undefined,
        'count',
        'count " 5" is not a whole number from 1 to 100',
      ],
      [
        'GET',
        '/v1/timers?dueBefore=tomorrow',
        undefined,
        'dueBefore',
        'dueBefore "tomorrow" is not an instant',
      ],
      [
        'GET',
        `${timer}/history?limit=abc`,
        undefined,
        'limit',
        'limit "abc" is not a whole number from 1 to 200',
      ],
      ['GET', `${timer}/next?count=`, undefined, 'count', 'count "" is not a whole number from 1 to 100'],
      [
        'GET',
        `${timer}/describe?count=ten`,
        undefined,
        'count',
        'count "ten" is not a whole number from 1 to 100',
      ],
      ['POST', '/v1/preview?count=abc', spec, 'count', 'count "abc" is not a whole number from 1 to 100'],
      ['POST', '/v1/timers', 'null', undefined, 'the timer spec must be a JSON object, got null'],
      ['POST', '/v1/timers', '42', undefined, 'the timer spec must be a JSON object, got 42'],
      ['POST', '/v1/preview', '"rv:2"', undefined, 'the timer spec must be a JSON object, got "rv:2"'],
      ['POST', `${timer}/reschedule`, 'null', 'when', 'when must be a JSON object, got null'],
    ];

    beforeAll(async () => {
      const created = await api('POST', '/v1/timers', { key: 'rv:1', handler: 'log', every: '1h' });
      expect(created.status).toBe(201);
    });

    it.each(cases)(
      '%s %s, body %s: 400 invalid with the value as sent',
      async (method, path, body, field, message) => {
        const before = await keyspace();
        const reply = await api<ErrorBody>(
          method,
          path,
          undefined,
          body === undefined ? undefined : { raw: body },
        );
        expect(reply.status).toBe(400);
        expect(reply.body.error).toEqual({
          reason: 'invalid',
          ...(field && { field }),
          message,
          fix: expect.any(String),
        });
        expect(await keyspace()).toEqual(before);
      },
    );
  });
});
