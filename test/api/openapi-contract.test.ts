import { keyPath, startRedis, waitFor, within } from '@sundial/testing/harness';
import { type RunningApp, startScheduler } from '../local-cluster';
import { MAX_PAYLOAD, useCluster } from './cluster-fixture';
import {
  brief,
  contractChecker,
  type ContractReply,
  type OpenApiDocument,
  untypedObjects,
} from './openapi-contract';

type Check = ReturnType<typeof contractChecker>;

/** An interval and a cron timer: between them, every optional field a spec of their kinds takes. */
const INTERVAL = {
  key: 'c:every',
  handler: 'record',
  every: '1h',
  payload: { n: 1 },
  meta: { team: 'a' },
  maxRuns: 5,
  delivery: 'at-most-once',
  jitter: '1s',
  endAt: '2099-01-01T00:00:00Z',
};
const CRON = {
  key: 'c:cron',
  handler: 'record',
  cron: '0 * * * *',
  tz: 'UTC',
  removeOnComplete: false,
  overlap: 'buffer-one',
  retry: { attempts: 3, backoff: { type: 'exponential', delay: '1s', maxDelay: '10s' } },
  pauseAfterFailures: 2,
  timeout: '5s',
  catchup: 'all',
  catchupWindow: '1h',
};

/**
 * docs/spec.md §5.2: clients are generated from /docs-json (openapi-generator, orval, openapi-typescript),
 * so what the API answers is what the document says. Each operation is called with successes and
 * refusals, on timers of every kind and status, and every answer is checked against the document:
 * its status listed, its body valid against that response's schema (no field the schema lacks, none it
 * requires missing, types, enums, nullable). The document had no refusal at all, no schema for the
 * list, the cancels and the registry, and a Timer without required fields.
 */
describe('HTTP API: the OpenAPI document is what the API answers', () => {
  const cluster = useCluster();
  let document: OpenApiDocument;
  let check: Check;
  const mismatches: string[] = [];
  const called = new Set<string>();
  /** a real Timer answer, for the check of the check */
  let sample: object = {};

  /** Sends a request to `route` ("post /v1/timers/{key}"), expecting `expected`, and checks the answer. */
  async function call(
    expected: number,
    route: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
    base = cluster.url,
  ): Promise<ContractReply & { headers: Headers }> {
    const method = route.split(' ')[0].toUpperCase();
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const response = await fetch(base + url, {
      method,
      headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: payload,
    });
    const text = await response.text();
    const contentType = response.headers.get('content-type');
    const reply = {
      status: response.status,
      body: contentType?.includes('json') && text ? (JSON.parse(text) as unknown) : text,
      contentType: text ? contentType : null,
      headers: response.headers,
    };
    called.add(route);
    // A status other than the one asked for is listed, not thrown: every request still runs and is checked.
    if (reply.status !== expected)
      mismatches.push(`${route} ${url}: expected ${expected}, got ${reply.status} ${brief(reply.body)}`);
    mismatches.push(...check(route, reply));
    return reply;
  }

  /** The timer under `key` once it has `status` (a worker run: short, awaited with a deadline). */
  const reach = (key: string, status: string) =>
    waitFor(async () => (await cluster.statusOf(key)) === status, { timeoutMs: 5000 }); // deadline

  beforeAll(async () => {
    document = (await cluster.api<OpenApiDocument>('GET', '/docs-json')).body;
    check = contractChecker(document);
  });

  afterEach(() => {
    expect(mismatches.splice(0)).toEqual([]);
  });

  it('schedules every kind, and refuses what it does not take', async () => {
    const post = 'post /v1/timers';
    const created = await call(201, post, '/v1/timers', { key: 'c:once', handler: 'record', delay: '1h' });
    expect(created.headers.get('location')).toBe('/v1/timers/c%3Aonce');
    expect((await cluster.api('GET', created.headers.get('location')!)).status).toBe(200);
    sample = (await call(201, post, '/v1/timers', INTERVAL)).body as object;
    await call(201, post, '/v1/timers', CRON);
    await call(201, post, '/v1/timers', { ...CRON, ifExists: 'keep' });
    await call(409, post, '/v1/timers', CRON);
    await call(400, post, '/v1/timers', { key: 'c:x', handler: 'log', delay: 1, every: 1 });
    await call(400, post, '/v1/timers');
    await call(400, post, '/v1/timers', '{"key":');
    await call(400, post, '/v1/timers?ifExists=replace', { ...CRON, key: 'c:q' });
    const big = { key: 'c:big', handler: 'log', delay: '1h', payload: 'x'.repeat(MAX_PAYLOAD * 2) };
    await call(413, post, '/v1/timers', big);
    const huge = { ...big, payload: 'x'.repeat(MAX_PAYLOAD + 32 * 1024) };
    await call(413, post, '/v1/timers', huge);
    const once = { key: 'c:idem', handler: 'log', delay: '1h' };
    const idem = { 'idempotency-key': 'contract-1' };
    const first = await call(201, post, '/v1/timers', once, idem);
    // a replay answers as the first request did: its Location too
    const replay = await call(201, post, '/v1/timers', once, idem);
    expect([replay.headers.get('location'), replay.body]).toEqual(['/v1/timers/c%3Aidem', first.body]);
    await call(422, post, '/v1/timers', { ...once, delay: '2h' }, idem);
    await call(400, post, '/v1/timers', once, { 'idempotency-key': 'k'.repeat(300) });
    const crossSite = { 'sec-fetch-site': 'cross-site' };
    await call(403, post, '/v1/timers', { ...once, key: 'c:xs' }, crossSite);
  });

  it('PUT creates (201) then replaces (200), and refuses another key', async () => {
    const put = 'put /v1/timers/{key}';
    const spec = { handler: 'log', every: '30m' };
    expect((await call(201, put, keyPath('c:put'), spec)).headers.get('location')).toBe(keyPath('c:put'));
    // a key with / and @ (taken by the key rule) is percent-encoded, and the Location is read back as it is
    const idem = { 'idempotency-key': 'contract-put' };
    const created = await call(201, put, keyPath('c:put/a@b'), spec, idem);
    expect(created.headers.get('location')).toBe('/v1/timers/c%3Aput%2Fa%40b');
    expect((await cluster.api('GET', created.headers.get('location')!)).body).toEqual(created.body);
    // PUT's replay is 201 again (its create step's answer), with the same Location
    const replay = await call(201, put, keyPath('c:put/a@b'), spec, idem);
    expect([replay.headers.get('location'), replay.body]).toEqual([
      created.headers.get('location'),
      created.body,
    ]);
    await call(200, put, keyPath('c:put'), { ...spec, every: '1h' });
    await call(400, put, keyPath('c:put'), { ...spec, key: 'c:other' });
    await call(413, put, keyPath('c:put'), { ...spec, payload: 'x'.repeat(MAX_PAYLOAD * 2) });
  });

  it('GET answers a timer in every status, and 404 for none', async () => {
    const get = 'get /v1/timers/{key}';
    const post = (spec: object) => call(201, 'post /v1/timers', '/v1/timers', spec);
    await post({ key: 's:running', handler: 'block', delay: 1, removeOnComplete: false });
    await post({ key: 's:completed', handler: 'record', delay: 1, removeOnComplete: false });
    await post({ key: 's:failed', handler: 'fail', delay: 1, removeOnComplete: false });
    // failed runs that end their timer, their entries saying `ended` (endAt 3 s ahead: a loaded host's call)
    const every = { cron: '* * * * * *', tz: 'UTC', removeOnComplete: false };
    await post({ key: 's:ended', handler: 'fail', ...every, endAt: Date.now() + 3_000 });
    await post({ key: 's:max-runs', handler: 'fail', every: '1s', maxRuns: 1, removeOnComplete: false });
    await post({ key: 's:paused', handler: 'record', every: '1h' });
    await post({ key: 's:cancelled', handler: 'record', every: '1h', removeOnComplete: false });
    await Promise.all([
      reach('s:running', 'running'),
      reach('s:completed', 'completed'),
      reach('s:failed', 'failed'),
      reach('s:ended', 'failed'),
      reach('s:max-runs', 'failed'),
    ]);
    await call(200, 'post /v1/timers/{key}/pause', `${keyPath('s:paused')}/pause`);
    await call(200, 'delete /v1/timers/{key}', keyPath('s:cancelled'));
    for (const key of ['c:once', 'c:every', 'c:cron', 's:running', 's:completed', 's:failed', 's:paused']) {
      await call(200, get, keyPath(key));
    }
    await call(404, get, keyPath('s:cancelled'));
    await call(404, get, keyPath('s:missing'));
    await call(400, get, `${keyPath('c:once')}?x=1`);
    await call(400, get, '/v1/timers/%E0%A4%A');
  });

  it('pause, resume, trigger, reschedule, backfill: 200, 400, 404 (a finished one-shot too), 409 inactive', async () => {
    const op = (name: string) => `post /v1/timers/{key}/${name}`;
    for (const name of ['pause', 'resume', 'trigger']) {
      await call(200, op(name), `${keyPath('c:every')}/${name}`);
      await call(404, op(name), `${keyPath('s:missing')}/${name}`);
      await call(404, op(name), `${keyPath('s:completed')}/${name}`);
      // 409 is not documented for resume: were it answered, the check would list it
      await call(400, op(name), `${keyPath('c:every')}/${name}`, { a: 1 });
    }
    const reschedule = op('reschedule');
    await call(200, reschedule, `${keyPath('c:once')}/reschedule`, { delay: '2h' });
    await call(400, reschedule, `${keyPath('c:once')}/reschedule`, { delay: 'soon' });
    await call(404, reschedule, `${keyPath('s:missing')}/reschedule`, { delay: '1h' });
    await call(409, reschedule, `${keyPath('s:running')}/reschedule`, { delay: '1h' });
    await call(409, op('pause'), `${keyPath('s:running')}/pause`);
    await call(200, op('resume'), `${keyPath('s:running')}/resume`);
    await call(404, reschedule, `${keyPath('s:completed')}/reschedule`, { delay: '1h' });
    await call(409, op('trigger'), `${keyPath('s:paused')}/trigger`);
    const backfill = op('backfill');
    const range = { from: Date.now() - 3 * 3_600_000, to: Date.now() - 1000 };
    await call(200, backfill, `${keyPath('c:cron')}/backfill`, range);
    await call(400, backfill, `${keyPath('c:cron')}/backfill`, { from: 'x', to: 1 });
    await call(400, backfill, `${keyPath('c:once')}/backfill`, range);
    await call(404, backfill, `${keyPath('s:missing')}/backfill`, range);
    await call(409, backfill, `${keyPath('s:paused')}/backfill`, range);
    await call(404, backfill, `${keyPath('s:completed')}/backfill`, range);
    cluster.releases.get('s:running')?.();
  });

  it('lists, and explains: history, next, describe, preview', async () => {
    const list = 'get /v1/timers';
    for (const query of [
      '',
      '?prefix=c:&limit=2',
      '?status=paused',
      '?status=completed',
      `?dueBefore=${Date.now() + 1e9}`,
    ]) {
      await call(200, list, `/v1/timers${query}`);
    }
    for (const query of ['?limit=abc', '?status=gone', '?prefx=c', '?cursor=zz']) {
      await call(400, list, `/v1/timers${query}`);
    }
    const explain = (name: string) => `get /v1/timers/{key}/${name}`;
    for (const key of ['c:every', 'c:cron', 's:completed', 's:failed', 's:ended', 's:max-runs']) {
      for (const name of ['history', 'next', 'describe']) {
        await call(200, explain(name), `${keyPath(key)}/${name}`);
      }
    }
    for (const name of ['history', 'next', 'describe']) {
      await call(404, explain(name), `${keyPath('s:missing')}/${name}`);
    }
    await call(400, explain('history'), `${keyPath('c:every')}/history?limit=0`);
    await call(400, explain('next'), `${keyPath('c:every')}/next?count=abc`);
    const preview = 'post /v1/preview';
    const spec = { key: 'p:1', handler: 'log', cron: '0 7 * * MON-FRI', tz: 'America/Toronto' };
    await call(200, preview, '/v1/preview?count=3', spec);
    await call(200, preview, '/v1/preview', { key: 'p:1', handler: 'log', delay: '5s' });
    // preview's spec is a NormalizedSpec: each field a spec can have comes back typed as documented
    const at = new Date(Date.now() + 3_600_000).toISOString();
    await call(200, preview, '/v1/preview', { key: 'p:2', handler: 'log', at });
    await call(200, preview, '/v1/preview', { ...INTERVAL, ifExists: 'keep', startAt: at });
    await call(200, preview, '/v1/preview', { ...CRON, ifExists: 'replace' });
    await call(400, preview, '/v1/preview', { ...spec, tz: 'Mars/Base' });
  });

  it('the registry, the cancels, health', async () => {
    await call(200, 'get /v1/registry', '/v1/registry');
    const { id } = (await cluster.api<{ id: string }>('GET', keyPath('c:every'))).body;
    await call(200, 'get /v1/registry/{id}', `/v1/registry/${id}`);
    await call(400, 'get /v1/registry/{id}', '/v1/registry/nope');
    const cancel = 'delete /v1/timers/{key}';
    await call(200, cancel, keyPath('c:once'));
    await call(404, cancel, keyPath('c:once'));
    await call(400, cancel, `${keyPath('c:every')}?force=1`);
    const cancelAll = 'delete /v1/timers';
    await call(200, cancelAll, '/v1/timers?prefix=c:');
    await call(400, cancelAll, '/v1/timers');
    await call(400, cancelAll, '/v1/timers?all=yes');
    await call(200, 'get /health/live', '/health/live');
    await call(200, 'get /health/ready', '/health/ready');
  });

  it('with a token configured, a /v1 call without it is 401', async () => {
    let guarded: RunningApp | undefined;
    try {
      guarded = await startScheduler(cluster.redisUrl, { apiToken: 'contract-token' });
      for (const [route, url] of [
        ['get /v1/timers', '/v1/timers'],
        ['post /v1/timers', '/v1/timers'],
        ['get /v1/registry', '/v1/registry'],
      ]) {
        await call(401, route, url, undefined, {}, guarded.url);
      }
    } finally {
      await guarded?.close();
    }
  });

  it('with Redis frozen, reads and writes answer 503 unavailable as documented', async () => {
    const redis = await startRedis();
    let frozen: RunningApp | undefined;
    try {
      frozen = await startScheduler(redis.url, { commandTimeoutMs: 300 });
      redis.signal('SIGSTOP');
      const spec = { key: 'c:frozen', handler: 'log', delay: '1h' };
      // deadline: the 300 ms bound, with a margin for a loaded host
      await within(
        Promise.all([
          call(503, 'get /v1/timers/{key}', keyPath('c:frozen'), undefined, {}, frozen.url),
          call(503, 'post /v1/timers', '/v1/timers', spec, {}, frozen.url),
          call(503, 'get /health/ready', '/health/ready', undefined, {}, frozen.url),
        ]),
        3_000,
        'the 503 answers',
      );
    } finally {
      redis.signal('SIGCONT');
      await frozen?.close();
      await redis.stop();
    }
  });

  it('the check itself finds a wrong type, a missing required field, an extra field, a status and a header', () => {
    const timer = { ...sample, dueAt: 'soon', extra: 1 } as Record<string, unknown>;
    delete timer.key;
    const found = check('get /v1/timers/{key}', {
      status: 200,
      body: timer,
      contentType: 'application/json',
    });
    expect(found.join('\n')).toMatch(/must have required property 'key'/);
    expect(found.join('\n')).toMatch(/dueAt must be number/);
    expect(found.join('\n')).toMatch(/must NOT have additional properties.*extra/);
    expect(check('get /v1/timers/{key}', { status: 418, body: '', contentType: null })).toEqual([
      expect.stringMatching(/418: status not documented/),
    ]);
    const created = { status: 201, body: sample, contentType: 'application/json', headers: new Headers() };
    expect(check('post /v1/timers', created)).toEqual([
      'POST /v1/timers 201: documented header Location missing',
      'POST /v1/timers 201: documented header Sundial-Now missing',
    ]);
    const preview = { spec: { key: 'p', handler: 'log', delayMs: '5s' }, next: [] };
    const previewed = check('post /v1/preview', {
      status: 200,
      body: preview,
      contentType: 'application/json',
    }).join('\n');
    expect(previewed).toMatch(/body\/spec must have required property 'kind'/);
    expect(previewed).toMatch(/body\/spec\/delayMs must be number/);
  });

  it('types every parameter and object, lists Idempotency-Key on every write, and every operation was called', () => {
    mismatches.push(...untypedObjects(document).map((where) => `${where}: an object without properties`));
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const changes = method !== 'get' && path !== '/v1/preview';
        const header = operation.parameters?.some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
        if (changes && !header) mismatches.push(`${method.toUpperCase()} ${path}: no Idempotency-Key header`);
        if (!called.has(`${method} ${path}`))
          mismatches.push(`${method.toUpperCase()} ${path}: not exercised`);
        // a generated client types each parameter by its schema: an untyped one becomes `any`
        for (const { name, schema } of operation.parameters ?? []) {
          const typed = schema !== undefined && ('type' in schema || '$ref' in schema);
          if (!typed) mismatches.push(`${method.toUpperCase()} ${path}: parameter ${name} has no type`);
        }
      }
    }
  });
});
