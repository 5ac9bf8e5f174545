import type { INestApplication } from '@nestjs/common';
import { RedisTimers } from '@sundial/redis';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import type { AddressInfo } from 'node:net';
import type { SchedulerServiceFactory } from '../../apps/scheduler/src/scheduler-service';
import { createSchedulerApp } from '../../apps/scheduler/src/scheduler-app';
import { schedulerConfigFromEnv } from '../../apps/scheduler/src/scheduler-config';
import { type HttpClient, httpClient, keyPath, type RedisServer, startRedis } from '@sundial/testing';
import { TEST_ENV } from '../local-cluster';

/**
 * The HTTP API under fuzzed input (issue 8, "Also"): wrong types, huge and deep JSON, bad keys,
 * unicode, NaN/Infinity/huge numbers, header tricks, Idempotency-Key reused and malformed. A refused
 * call (4xx) changes nothing in Redis (no request pin, no remembered answer either)
 * — the whole keyspace, keys and DUMPed values, is compared before and after it — and nothing
 * answers 5xx (Redis is up, so not even the documented 503).
 *
 * The scheduler app serves its real API over Redis but runs without its loops (dispatcher,
 * reconciler): they change the keyspace on their own time (a fuzzed `delay: 0` falls due at once),
 * and what is compared here is what a call itself does.
 */
describe('HTTP API fuzz: a refused call changes nothing, and nothing is a 5xx', () => {
  const TOKEN = 'fuzz-token';
  const MAX_PAYLOAD = 2048;
  let redis: RedisServer;
  let raw: Redis;
  let app: INestApplication;
  let api: HttpClient;

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    const config = {
      ...schedulerConfigFromEnv({ ...TEST_ENV, REDIS_URL: redis.url }),
      apiToken: TOKEN,
      maxPayloadBytes: MAX_PAYLOAD,
    };
    app = await createSchedulerApp(config, apiOnly);
    await app.listen(0, '127.0.0.1');
    api = httpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
  });

  afterAll(async () => {
    await app?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  /**
   * Every key and its value (TTLs left out: a tombstone's shrinks as time passes). A hash or set is read
   * field by field, sorted: its DUMP follows the dict's iteration order, which a mere read changes while
   * Redis rehashes the dict incrementally (a row with a long field is a dict, and an HGET moved its
   * fields about under DUMP). Other types DUMP in a fixed order.
   */
  async function keyspace(): Promise<Map<string, string>> {
    const keys = (await raw.keys('*')).sort();
    const types = ((await raw.pipeline(keys.map((key) => ['type', key])).exec()) ?? []).map(
      ([, type]) => type,
    );
    const pipeline = raw.pipeline();
    keys.forEach((key, i) => {
      if (types[i] === 'hash') pipeline.hgetall(key);
      else if (types[i] === 'set') pipeline.smembers(key);
      else pipeline.dumpBuffer(key);
    });
    const values = (await pipeline.exec()) ?? [];
    return new Map(keys.map((key, i) => [key, `${String(types[i])} ${canonical(values[i][1])}`]));
  }

  it('holds for ~300 fuzzed calls', async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(request(), async ({ method, path, body, headers }) => {
        const before = await keyspace();
        const reply = await api(method, path, undefined, { raw: body, headers });
        const context = `${method} ${path} ${JSON.stringify(headers)} ${body?.slice(0, 200)} → ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`;
        if (reply.status >= 500) throw new Error(`5xx: ${context}`);
        const { error, dueAt } = (reply.body ?? {}) as { error?: Record<string, unknown>; dueAt?: unknown };
        const outcome = reply.status < 400 ? 'accepted' : String(error?.reason);
        seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
        // An accepted timer's due is a real date (delay: 1e20 once gave one no Date can hold).
        if (typeof dueAt === 'number' && Number.isNaN(new Date(dueAt).getTime())) {
          throw new Error(`dueAt is not a date: ${context}`);
        }
        if (reply.status >= 400) {
          if (!error || typeof error.reason !== 'string' || typeof error.fix !== 'string') {
            throw new Error(`refusal without the error shape: ${context}`);
          }
          const after = await keyspace();
          const changed = changedKeys(before, after);
          if (changed.length > 0) throw new Error(`a refused call changed ${changed.join(', ')}: ${context}`);
        }
      }),
      { numRuns: 300, interruptAfterTimeLimit: 25_000 },
    );
    // The generators reach both sides: calls that are taken, and each kind of refusal.
    expect(Object.fromEntries(seen)).toMatchObject({
      accepted: expect.any(Number),
      invalid: expect.any(Number),
      unauthorized: expect.any(Number),
      'payload-too-large': expect.any(Number),
      'not-found': expect.any(Number),
    });
  }, 60_000);

  /** One fuzzed HTTP call. */
  function request() {
    const auth = fc.oneof(
      { weight: 6, arbitrary: fc.constant(`Bearer ${TOKEN}`) },
      fc.constantFrom(
        undefined,
        '',
        'Bearer',
        `bearer ${TOKEN}`,
        `Bearer ${TOKEN}x`,
        `Basic ${TOKEN}`,
        `Bearer  ${TOKEN} `,
      ),
      // What fetch lets through a header: visible ASCII and Latin-1.
      fc
        .string({ unit: fc.constantFrom(...'aZ9 ~!#$%&*+-.^_|"(),/:;<=>?@[]{}éÿ\t'), maxLength: 40 })
        .map((text) => `Bearer ${text}`),
    );
    const contentType = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-16',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
      undefined,
    );
    const timersCall = fc.oneof(
      fc.record({ method: fc.constant('POST'), path: fc.constant('/v1/timers'), body: specBody(true) }),
      fc.record({ method: fc.constant('PUT'), path: keyArb().map(keyPath), body: specBody(false) }),
      fc.record({
        method: fc.constant('POST'),
        path: fc
          .tuple(keyArb(), fc.constantFrom('reschedule', 'pause', 'resume', 'nope'))
          .map(([key, action]) => `${keyPath(key)}/${action}`),
        body: jsonText(whenValue()),
      }),
      fc.record({
        method: fc.constantFrom('DELETE', 'GET'),
        path: fc.oneof(
          keyArb().map(keyPath),
          // a list without a query: always taken (an unknown parameter such as `x` is refused)
          fc.constant('/v1/timers'),
          fc
            .tuple(
              fc.constantFrom('prefix', 'status', 'limit', 'cursor', 'dueBefore', 'x'),
              fc.string({ unit: 'grapheme', maxLength: 30 }),
            )
            .map(([name, value]) => `/v1/timers?${name}=${encodeURIComponent(value)}`),
        ),
        body: fc.constant(undefined),
      }),
    );
    // A few keys, so that retries (same call) and conflicts (another call) happen, and malformed ones.
    const idempotencyKey = fc.constantFrom(
      undefined,
      undefined,
      'k1',
      'k2',
      'k3',
      '',
      'has space',
      'é',
      'x'.repeat(256),
    );
    return fc
      .tuple(timersCall, auth, contentType, idempotencyKey)
      .map(([call, authorization, type, idempotency]) => ({
        ...call,
        headers: {
          ...(authorization === undefined ? {} : { authorization }),
          ...(type === undefined || call.body === undefined ? {} : { 'content-type': type }),
          ...(idempotency === undefined ? {} : { 'idempotency-key': idempotency }),
        },
      }));
  }

  /** A body for POST (with key) or PUT (key in the path): a spec, a broken one, or no JSON at all. */
  function specBody(withKey: boolean): fc.Arbitrary<string | undefined> {
    // Mostly one schedule field (so the rest of the spec is what is tested), sometimes any mix.
    const schedule = fc.oneof(
      { weight: 3, arbitrary: fc.record({ delay: timeValue() }) },
      { weight: 3, arbitrary: fc.record({ every: timeValue() }) },
      { weight: 2, arbitrary: fc.record({ at: atValue() }) },
      {
        weight: 2,
        arbitrary: fc.record(
          {
            cron: fc.oneof(
              fc.constantFrom('0 0 1 1 *', '* * * *', '0 0 30 2 *', '61 * * * *', ''),
              anyValue(),
            ),
            tz: fc.oneof(fc.constantFrom('UTC', 'America/Toronto', 'Mars/Base', ''), anyValue()),
          },
          { requiredKeys: ['cron'] },
        ),
      },
      fc.record({ delay: timeValue(), every: timeValue(), at: atValue() }, { requiredKeys: [] }),
    );
    // A spec that would be taken, then up to two fields set to something odd: most calls then
    // differ from a valid one in one place, which is where validation has to hold.
    const field = fc.oneof(
      fc.constantFrom('key', 'handler', 'payload', 'delay', 'every', 'at', 'cron', 'tz', 'maxRuns'),
      fc.constantFrom('awaitTask', 'removeOnComplete', 'meta', 'ifExists', 'delivery', 'unknownField', ''),
    );
    const oddValue = fc.oneof(
      anyValue(),
      timeValue(),
      atValue(),
      fc.constantFrom(
        '0 0 1 1 *',
        '* * * *',
        '0 0 30 2 *',
        'Mars/Base',
        'UTC',
        'keep',
        'replace',
        'at-most-once',
      ),
      fc.constantFrom(1, 0, -1, 1.5, 1e20, { nested: { deep: [1, 2, { x: null }] } }),
    );
    const spec = fc
      .tuple(
        fc.record({ key: keyArb(), handler: fc.constantFrom('log', 'http') }),
        schedule,
        fc.array(fc.tuple(field, oddValue), { maxLength: 2 }),
      )
      .map(([base, when, odd]) => {
        const value: Record<string, unknown> = { ...base, ...when, ...Object.fromEntries(odd) };
        if (!withKey) delete value.key;
        return value;
      });
    return fc.oneof(
      { weight: 8, arbitrary: jsonText(spec) },
      jsonText(anyValue()),
      fc.constantFrom(
        undefined,
        '',
        '{',
        '{"key": NaN}',
        '{"key":"a","handler":"log","delay":Infinity}',
        '{"key":"a","handler":"log","delay":1e999}',
        '{"key":"a","handler":"log","delay":-1e999}',
        '{"key":"a","handler":"log","delay":"3600000","__proto__":{"every":1}}',
        '{"key":"a","handler":"log","constructor":{"prototype":{"x":1}},"delay":"2h"}',
        'null',
        '[]',
        '"string"',
        '\u0000',
        '\uFEFF{"key":"a","handler":"log","delay":"2h"}',
      ),
      fc.nat({ max: 20_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
      fc
        .nat({ max: 20_000 })
        .map(
          (depth) =>
            `{"key":"deep","handler":"log","delay":"2h","payload":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`,
        ),
      fc
        .integer({ min: MAX_PAYLOAD, max: 200_000 })
        .map((size) =>
          JSON.stringify({ key: 'big', handler: 'log', delay: '2h', payload: 'x'.repeat(size) }),
        ),
    );
  }

  /** A delay or every: valid values are an hour or more; the rest is wrong in every way we know. */
  function timeValue(): fc.Arbitrary<unknown> {
    return fc.oneof(
      fc.constantFrom(3_600_000, '1h', '2.5h', '14d', 36_525 * 86_400_000, '36525d'),
      fc.constantFrom(
        0,
        -1,
        99,
        1e20,
        -1e20,
        Number.MAX_VALUE,
        Number.MIN_VALUE,
        1e15,
        '1hr',
        '1e20d',
        '-5s',
        ' 1h',
        'NaN',
        'Infinity',
        '٣h',
        '1ｈ',
      ),
      fc.double({ min: 3_600_000, noNaN: true }),
      anyValue(),
    );
  }

  function atValue(): fc.Arbitrary<unknown> {
    return fc.oneof(
      fc.constantFrom(
        '2099-01-01T00:00:00Z',
        4_102_444_800_000,
        '2099-01-01T00:00:00',
        '2099-13-01T00:00:00Z',
        8.64e15 + 1,
        -1,
        '+275760-09-13T00:00:00.001Z',
      ),
      anyValue(),
    );
  }

  /** The body of a reschedule: { delay } | { at }, or something else. */
  function whenValue(): fc.Arbitrary<unknown> {
    return fc.oneof(
      fc.record({ delay: timeValue() }),
      fc.record({ at: atValue() }),
      fc.record({ delay: timeValue(), at: atValue() }),
      anyValue(),
    );
  }

  /** A key: a few valid ones timers share, or a malformed one. */
  function keyArb(): fc.Arbitrary<string> {
    return fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('a', 'b', 'fz:1', 'fz:2', 'fz/x@y.z') },
      fc.constantFrom(
        '',
        ' ',
        'a b',
        'é',
        '💥',
        '..',
        '../..',
        '%00',
        'k'.repeat(257),
        'a\nb',
        '*',
        '?',
        '#',
      ),
      fc.string({ unit: 'grapheme', maxLength: 20 }),
    );
  }

  function anyValue(): fc.Arbitrary<unknown> {
    return fc.oneof(
      fc.constantFrom(null, true, false, 0, -0, '', 'x'.repeat(300), '\u202e', '😀', { __proto__: null }),
      fc.double(),
      fc.string({ unit: 'grapheme', maxLength: 30 }),
      fc.array(fc.integer(), { maxLength: 5 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
    );
  }

  /** JSON.stringify, keeping what JSON cannot say as the literal a careless client would send. */
  function jsonText(value: fc.Arbitrary<unknown>): fc.Arbitrary<string | undefined> {
    return value.map((v) =>
      JSON.stringify(v, (_key, item: unknown) =>
        typeof item === 'number' && !Number.isFinite(item) ? `__${item}__` : item,
      )?.replace(/"__(NaN|Infinity|-Infinity)__"/g, '$1'),
    );
  }
});

/** A value read from Redis, in a form that is equal exactly when the values are. */
function canonical(value: unknown): string {
  if (value === null || value === undefined) return 'gone';
  if (Buffer.isBuffer(value)) return value.toString('hex');
  if (Array.isArray(value)) return JSON.stringify([...(value as string[])].sort());
  return JSON.stringify(Object.entries(value as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The keys added, removed or changed between two snapshots. */
function changedKeys(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((key) => before.get(key) !== after.get(key));
}

/** The scheduler's Timers API over Redis, without the dispatcher and reconciler loops. */
const apiOnly: SchedulerServiceFactory = (config, logger) => {
  const timers = new RedisTimers({
    connection: config.redisUrl,
    prefix: config.prefix,
    partitions: config.partitions,
    logger,
    limits: { maxPayloadBytes: config.maxPayloadBytes, minEveryMs: config.minEveryMs },
  });
  return { timers, start: () => timers.connect(), stop: () => timers.dispose() };
};
