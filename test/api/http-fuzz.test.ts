import type { INestApplication } from '@nestjs/common';
import { RedisTimers } from '@sundial/redis';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import type { AddressInfo } from 'node:net';
import type { SchedulerServiceFactory } from '../../apps/scheduler/src/scheduler-service';
import { createSchedulerApp } from '../../apps/scheduler/src/scheduler-app';
import { schedulerConfigFromEnv } from '../../apps/scheduler/src/scheduler-config';
import { type HttpClient, httpClient, keyPath, type RedisServer, startRedis } from '@sundial/testing/harness';
import { TEST_ENV } from '../local-cluster';
import { jsonText, KEYS, keyArb, specBody, whenValue } from './http-fuzz-values';

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
/**
 * The run's seed: SUNDIAL_FUZZ_SEED replays a run (same calls in the same order, on the fresh Redis
 * each run starts with); unset, each run draws its own, so runs keep covering new ground. A failure
 * names it.
 */
const SEED = fuzzSeed(process.env.SUNDIAL_FUZZ_SEED);

/** What the generators must reach in a run: calls that are taken, and each kind of refusal. */
const OUTCOMES = ['accepted', 'invalid', 'unauthorized', 'payload-too-large', 'not-found'];

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
    const known = knownOutcomes();
    try {
      await fc.assert(
        fc.asyncProperty(request(), async (call) => {
          const { method, path, body, headers } = call;
          const before = await keyspace();
          const reply = await api(method, path, undefined, { raw: body, headers });
          const context = `${method} ${path} ${JSON.stringify(headers)} ${body?.slice(0, 200)} → ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`;
          if (reply.status >= 500) throw new Error(`5xx: ${context}`);
          const { error, dueAt } = (reply.body ?? {}) as { error?: Record<string, unknown>; dueAt?: unknown };
          const outcome = reply.status < 400 ? 'accepted' : String(error?.reason);
          seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
          const wanted = known.get(call);
          if (wanted !== undefined && outcome !== wanted) throw new Error(`not ${wanted}: ${context}`);
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
            if (changed.length > 0)
              throw new Error(`a refused call changed ${changed.join(', ')}: ${context}`);
          }
        }),
        {
          numRuns: 300,
          interruptAfterTimeLimit: 25_000,
          seed: SEED,
          examples: [...known.keys()].map((call) => [call]),
        },
      );
      // Both sides were reached: calls that are taken, and each kind of refusal.
      const missing = OUTCOMES.filter((outcome) => !seen.has(outcome));
      if (missing.length > 0) {
        throw new Error(
          `no call ended ${missing.join(', ')}; seen: ${JSON.stringify(Object.fromEntries(seen))}`,
        );
      }
    } catch (error) {
      throw withSeed(error);
    }
  }, 60_000);

  it('is replayable: a seed draws the same calls every time (nothing in the generators is unseeded)', () => {
    const draw = () => fc.sample(request(), { seed: SEED, numRuns: 100 });
    expect(draw()).toEqual(draw());
    expect(fuzzSeed('-123')).toBe(-123);
    expect(fuzzSeed('4294967295')).toBe(-1);
    expect(() => fuzzSeed('abc')).toThrow(/SUNDIAL_FUZZ_SEED=abc is not a 32-bit integer/);
  });

  /**
   * A call of each outcome, and the outcome it must get, run before the drawn ones (fast-check's
   * `examples`): every run meets each kind of refusal whatever its seed, however early the time limit
   * stops it. Drawn, a run of 300 saw `payload-too-large` and `not-found` 16 times on average (33 seeds):
   * each missing about once in 10^7 runs (e^-16), more often in a run the time limit cuts short (300
   * calls took 5 s at load 20).
   */
  function knownOutcomes(): Map<Call, string> {
    const json = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const put = (key: string, spec: object): Call => ({
      method: 'PUT',
      path: keyPath(key),
      body: JSON.stringify(spec),
      headers: json,
    });
    return new Map([
      [put('fz:1', { handler: 'log', delay: '1h' }), 'accepted'],
      [put('fz:1', { handler: 'log', delay: 'soon' }), 'invalid'],
      [{ method: 'GET', path: '/v1/timers', body: undefined, headers: {} }, 'unauthorized'],
      [put('big', { handler: 'log', delay: '2h', payload: 'x'.repeat(MAX_PAYLOAD) }), 'payload-too-large'],
      [{ method: 'GET', path: keyPath('fz:never'), body: undefined, headers: json }, 'not-found'],
    ]);
  }

  /** One fuzzed HTTP call. */
  function request(): fc.Arbitrary<Call> {
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
    const queryName = fc.constantFrom('prefix', 'status', 'limit', 'cursor', 'dueBefore', 'count', 'x');
    const queryValue = fc.oneof(
      fc.constantFrom('1', '5', 'a:'),
      fc.string({ unit: 'grapheme', maxLength: 30 }),
    );
    const timersCall = fc.oneof(
      fc.record({
        method: fc.constant('POST'),
        path: fc.constant('/v1/timers'),
        body: specBody(true, MAX_PAYLOAD),
      }),
      fc.record({
        method: fc.constant('PUT'),
        path: keyArb().map(keyPath),
        body: specBody(false, MAX_PAYLOAD),
      }),
      fc.record({
        method: fc.constant('POST'),
        path: fc
          .tuple(keyArb(), fc.constantFrom('reschedule', 'pause', 'resume', 'nope'))
          .map(([key, action]) => `${keyPath(key)}/${action}`),
        body: jsonText(whenValue()),
      }),
      fc.record({
        method: fc.constantFrom('DELETE', 'GET'),
        path: fc
          .tuple(
            fc.oneof(
              fc.constant('/v1/timers'),
              fc
                .tuple(keyArb(), fc.constantFrom('', '/history', '/next', '/describe'))
                .map(([key, view]) => `${keyPath(key)}${view}`),
            ),
            // none (a list without a query is always taken), a route's own, another route's, an
            // unknown one (`x`), the same one twice
            fc.oneof(
              fc.array(fc.tuple(queryName, queryValue), { maxLength: 3 }),
              fc.tuple(queryName, queryValue, queryValue).map(([name, a, b]) => [
                [name, a],
                [name, b],
              ]),
            ),
          )
          .map(([route, query]) =>
            query.length === 0
              ? route
              : `${route}?${query.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&')}`,
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
    const fuzzed = fc
      .tuple(timersCall, auth, contentType, idempotencyKey)
      .map(([call, authorization, type, idempotency]) => ({
        ...call,
        headers: {
          ...(authorization === undefined ? {} : { authorization }),
          ...(type === undefined || call.body === undefined ? {} : { 'content-type': type }),
          ...(idempotency === undefined ? {} : { 'idempotency-key': idempotency }),
        },
      }));
    // A fuzzed call is taken only when its token, content type, Idempotency-Key and body are all
    // right: about 1 in 70, so a run of 300 once drew none. A tenth of the calls are taken ones (a PUT
    // is taken whatever the key holds): every run has both sides, and later calls meet live timers.
    const taken = fc.record({
      method: fc.constant('PUT'),
      path: fc.constantFrom(...KEYS).map(keyPath),
      body: jsonText(fc.record({ handler: fc.constant('log'), delay: fc.constantFrom('1h', '14d') })),
      headers: fc.constant({ authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }),
    });
    return fc.oneof({ weight: 9, arbitrary: fuzzed }, taken);
  }
});

/** One HTTP call of the fuzz. */
interface Call {
  method: string;
  path: string;
  body: string | undefined;
  headers: Record<string, string>;
}

/** SUNDIAL_FUZZ_SEED as fast-check's seed (a 32-bit integer), or a new one when it is unset. */
function fuzzSeed(text: string | undefined): number {
  if (text === undefined || text.trim() === '') return (Math.random() * 2 ** 32) | 0;
  const seed = Number(text);
  if (!Number.isInteger(seed) || seed < -(2 ** 31) || seed >= 2 ** 32) {
    throw new Error(`SUNDIAL_FUZZ_SEED=${text} is not a 32-bit integer: pass the seed a failed run printed`);
  }
  return seed | 0;
}

/** The failure, with the seed that replays the run in front of its message. */
function withSeed(error: unknown): Error {
  const failure = error instanceof Error ? error : new Error(String(error));
  failure.message = `replay with SUNDIAL_FUZZ_SEED=${SEED}\n${failure.message}`;
  return failure;
}

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
