import type { ListResult } from '@sundial/core';
import { type ErrorBody, keyPath } from '@sundial/testing/harness';
import { useScheduler } from './scheduler-fixture';

/**
 * docs/spec.md §2, §5.2: refusals at the HTTP edge, in HTTP terms, changing nothing. Unknown query
 * parameters were ignored (`GET /v1/timers?prefx=inv:`, a typo, listed every timer, and
 * `DELETE /v1/timers?prefix=&staus=paused` cancelled them all); a not-found from the TimersApi suggested
 * `list()`, the in-process call; a POST without a body said "got undefined". Routes without a query
 * ignored one (`DELETE /v1/timers/:key?force=1` cancelled), and a parameter given twice was an array
 * where a string was expected (500 on history, next, describe and preview).
 */
describe('HTTP API: refusals at the edge', () => {
  const app = useScheduler();
  const { api, refused } = app;
  const timer = keyPath('qp:inv:1');
  const missing = keyPath('hw:missing');
  const spec = { key: 'qp:new', handler: 'log', every: '1h' };

  beforeAll(async () => {
    for (const key of ['qp:inv:1', 'qp:other:1']) {
      expect((await api('POST', '/v1/timers', { key, handler: 'log', every: '1h' })).status).toBe(201);
    }
  });

  describe('a query parameter the route does not take', () => {
    // [method, path, the unknown parameter, the fix]
    const cases: [string, string, string, string][] = [
      [
        'GET',
        '/v1/timers?prefx=qp:inv:',
        'prefx',
        'Did you mean prefix? GET /v1/timers takes prefix, status, limit, cursor, dueBefore.',
      ],
      ['DELETE', '/v1/timers?prefix=&staus=paused', 'staus', 'DELETE /v1/timers takes prefix, all.'],
      [
        'GET',
        `${timer}/history?limt=5`,
        'limt',
        'Did you mean limit? GET /v1/timers/:key/history takes limit.',
      ],
      ['GET', `${timer}/next?n=5`, 'n', 'GET /v1/timers/:key/next takes count.'],
      [
        'GET',
        `${timer}/describe?count=2&cuont=3`,
        'cuont',
        'Did you mean count? GET /v1/timers/:key/describe takes count, limit.',
      ],
      ['POST', '/v1/preview?cnt=2', 'cnt', 'Did you mean count? POST /v1/preview takes count.'],
    ];

    it.each(cases)('%s %s: 400 invalid naming %s, nothing changed', async (method, path, name, fix) => {
      expect(await refused(method, path, method === 'POST' ? spec : undefined)).toEqual({
        reason: 'invalid',
        field: name,
        message: `${fix.replace(/^Did you mean \w+\? /, '').replace(/ takes .*/, '')} takes no query parameter "${name}".`,
        fix,
      });
    });

    it('the parameters a route takes still work', async () => {
      const listed = await api<ListResult>('GET', '/v1/timers?prefix=qp:inv:&limit=10');
      expect(listed.status).toBe(200);
      expect(listed.body.items.map((t) => t.key)).toEqual(['qp:inv:1']);
      expect((await api('GET', `${timer}/describe?count=2&limit=3`)).status).toBe(200);
    });
  });

  describe('every /v1 route, whether or not it takes a query', () => {
    interface Operation {
      parameters?: { name: string; in: string }[];
      requestBody?: unknown;
    }

    it('refuses a parameter its OpenAPI entry does not list, naming what it takes; nothing changed', async () => {
      const document = await api<{ paths: Record<string, Record<string, Operation>> }>('GET', '/docs-json');
      const routes = Object.entries(document.body.paths)
        .filter(([path]) => path.startsWith('/v1/'))
        .flatMap(([path, operations]) =>
          Object.entries(operations).map(([method, op]) => ({ path, method, op })),
        );
      // every route of the §5.2 table: those without a query were the ones that ignored one
      expect(routes.length).toBeGreaterThanOrEqual(17);
      const before = (await app.raw.keys('*')).sort();
      for (const { path, method, op } of routes) {
        const route = `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`;
        const url = path.replace('{key}', encodeURIComponent('qp:inv:1')).replace('{id}', 'x');
        const known = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
        const reply = await api<ErrorBody>(method.toUpperCase(), `${url}?zz=1`);
        expect({ route, status: reply.status, error: reply.body.error }).toEqual({
          route,
          status: 400,
          error: {
            reason: 'invalid',
            field: 'zz',
            message: `${route} takes no query parameter "zz".`,
            fix: known.length
              ? expect.stringMatching(new RegExp(`^${route} takes [\\w, ]+\\.$`))
              : `Remove "zz" from the query: ${route} takes no query parameters${op.requestBody ? ' (its settings go in the JSON body)' : ''}.`,
          },
        });
        // the parameters the fix lists are the ones the OpenAPI document lists
        const listed = known.length ? / takes ([\w, ]+)\.$/.exec(reply.body.error.fix)![1].split(', ') : [];
        expect([route, listed.sort()]).toEqual([route, known.sort()]);
      }
      // DELETE /v1/timers/:key?zz=1 cancelled nothing, POST …/pause?zz=1 paused nothing
      expect((await app.raw.keys('*')).sort()).toEqual(before);
      expect((await api<{ status: string }>('GET', timer)).body.status).toBe('pending');
    });

    it('POST /v1/timers?ifExists=replace says the setting goes in the body; DELETE …?force=1 cancels nothing', async () => {
      const body = { key: 'qp:inv:1', handler: 'log', every: '2h' };
      const post = await api<ErrorBody>('POST', '/v1/timers?ifExists=replace', body);
      expect(post.status).toBe(400);
      expect(post.body.error.fix).toBe(
        'Remove "ifExists" from the query: POST /v1/timers takes no query parameters (its settings go in the JSON body).',
      );
      expect((await api<ErrorBody>('DELETE', `${timer}?force=1`)).body.error).toMatchObject({
        reason: 'invalid',
        field: 'force',
        fix: 'Remove "force" from the query: DELETE /v1/timers/:key takes no query parameters.',
      });
      expect((await api<{ everyMs: number }>('GET', timer)).body.everyMs).toBe(3_600_000);
    });

    it('leaves /health and /metrics alone (probes and scrapers add their own query)', async () => {
      expect((await api('GET', '/health/live?probe=1')).status).toBe(200);
      expect((await api('GET', '/metrics?name[]=x')).status).toBe(200);
    });
  });

  describe('a query parameter given twice', () => {
    it.each([
      ['GET', '/v1/timers?prefix=qp:inv:&prefix=qp:other:', 'prefix'],
      ['DELETE', '/v1/timers?prefix=qp:&prefix=', 'prefix'],
      ['GET', `${timer}/history?limit=1&limit=2`, 'limit'],
      ['GET', `${timer}/next?count=1&count=1`, 'count'],
      ['GET', `${timer}/describe?count=1&limit=2&limit=3`, 'limit'],
      ['POST', '/v1/preview?count=2&count=3', 'count'],
    ])('%s %s: 400 invalid naming it, no value picked, nothing changed', async (method, path, name) => {
      expect(await refused(method, path, method === 'POST' ? spec : undefined)).toEqual({
        reason: 'invalid',
        field: name,
        message: expect.stringMatching(new RegExp(` takes ${name} once; the query gives it 2 times\\.$`)),
        fix: `Send ${name} once, with the one value meant (one request per value).`,
      });
    });
  });

  describe('a body on a route that takes none', () => {
    it.each([
      ['POST', 'pause', { delay: '1h' }],
      ['POST', 'trigger', { force: true }],
      ['DELETE', '', { force: true }],
      ['POST', 'resume', null],
    ])('%s …/%s with %j: 400 invalid field body, nothing changed', async (method, action, body) => {
      expect(await refused(method, action ? `${timer}/${action}` : timer, body)).toEqual({
        reason: 'invalid',
        field: 'body',
        message: expect.stringMatching(
          /^(POST|DELETE|GET) \/v1\/timers\/:key\S* takes no body, and the request had one\.$/,
        ),
        fix: 'Send the request without a body (or with {}): this route reads nothing from it.',
      });
    });

    it('{} (what some clients send on every POST) is no body', async () => {
      await api('PUT', keyPath('qp:b:1'), { handler: 'log', every: '1h' });
      expect((await api<{ status: string }>('POST', `${keyPath('qp:b:1')}/pause`, {})).body.status).toBe(
        'paused',
      );
    });
  });

  describe('not-found', () => {
    it.each([
      ['POST', `${missing}/reschedule`, { delay: '1h' }],
      ['POST', `${missing}/pause`, undefined],
      ['POST', `${missing}/resume`, undefined],
      ['POST', `${missing}/trigger`, undefined],
      ['POST', `${missing}/backfill`, { from: 0, to: 1000 }],
      ['GET', `${missing}/next`, undefined],
      ['GET', missing, undefined],
    ])('%s %s: 404 not-found whose fix names the HTTP route, not list()', async (method, path, body) => {
      const reply = await api<ErrorBody>(method, path, body);
      expect(reply.status).toBe(404);
      expect(reply.body.error).toMatchObject({ reason: 'not-found', field: 'key' });
      // the key's own scope and history route, URL-encoded as in the path (before: `?prefix=<scope>`, and
      // no word of the history a one-shot keeps once its run ended and it was removed)
      expect(reply.body.error.fix).toBe(
        'Check the key; GET /v1/timers?prefix=hw%3A lists the timers under it. One listed as completed or failed has ended (kept by "removeOnComplete": false): schedule it again to run it. One removed when it ended (a one-shot after its run, by default) keeps its history for 7 days: GET /v1/timers/hw%3Amissing/history.',
      );
      expect(reply.body.error.fix).not.toContain('list(');
    });
  });

  describe('refusals whose in-process wording names a call', () => {
    it('backfill of a one-shot: its fix names the trigger route of that key, not trigger(key)', async () => {
      expect((await api('POST', '/v1/timers', { key: 'qp:once', handler: 'log', delay: '1h' })).status).toBe(
        201,
      );
      const range = { from: 0, to: 1000 };
      expect(await refused('POST', `${keyPath('qp:once')}/backfill`, range)).toMatchObject({
        reason: 'invalid',
        field: 'key',
        message: expect.stringContaining('has no slots to backfill'),
        fix: 'Backfill an every or cron timer, or POST /v1/timers/qp%3Aonce/trigger to run a one-shot timer now.',
      });
    });
  });

  describe('GET /v1/registry/:id with an id that is not <seq>p<partition>', () => {
    it.each(
      [
        'x',
        'qp:inv:1',
        '42',
        '42p',
        'p3',
        '042p3',
        '42p03',
        '1p12345',
        '4'.repeat(20) + 'p1',
        '9007199254740993p1',
        'a'.repeat(5000),
      ].map((id) => [id.length > 30 ? `${id.slice(0, 8)}… (${id.length} characters)` : id, id]),
    )('%s: 400 invalid on field id, not { live: false } echoed back', async (_label, id) => {
      const reply = await api<ErrorBody>('GET', `/v1/registry/${encodeURIComponent(id)}`);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ reason: 'invalid', field: 'id' });
      expect(reply.body.error.message.length).toBeLessThan(120);
      expect(reply.body.error.fix).toContain('<seq>p<partition>');
    });

    it('a well-formed id that is not live still answers { live: false }', async () => {
      for (const id of ['0p0', '42p3', '9007199254740991p1023']) {
        expect(await api('GET', `/v1/registry/${id}`)).toMatchObject({
          status: 200,
          body: { id, live: false },
        });
      }
    });
  });

  describe('a POST or PUT without a body', () => {
    it.each([
      ['POST', '/v1/timers'],
      ['PUT', keyPath('hw:2')],
      ['POST', `${timer}/reschedule`],
      ['POST', `${timer}/backfill`],
      ['POST', '/v1/preview'],
    ])(
      '%s %s without a body: 400 invalid saying there was no body, nothing changed',
      async (method, path) => {
        const error = await refused(method, path);
        expect(error).toMatchObject({ reason: 'invalid', field: 'body' });
        expect(error.message).toMatch(/no body/);
        expect(error.message).not.toMatch(/undefined/);
        expect(error.fix).toMatch(/^Send a JSON body/);
      },
    );
  });

  describe('the owner mark in meta (docs/spec.md §5.1)', () => {
    // A timer created with it was taken for a row of the schedules file and removed by its follower.
    const marked = { handler: 'log', every: '1h', meta: { sundialOwner: 'schedules-file', team: 'a' } };
    it.each([
      ['POST', '/v1/timers', { key: 'qp:marked', ...marked }],
      ['PUT', keyPath('qp:marked'), marked],
      ['PUT', timer, marked],
      ['POST', '/v1/preview', { key: 'qp:marked', ...marked }],
    ])('%s %s with meta.sundialOwner: 400 invalid naming it, nothing changed', async (method, path, body) => {
      expect(await refused(method, path, body)).toMatchObject({
        reason: 'invalid',
        field: 'meta.sundialOwner',
        message: expect.stringContaining('schedules file'),
        fix: expect.stringMatching(/^Rename meta\.sundialOwner/),
      });
    });
  });

  describe("a cron's jitter not shorter than the gap between its slots (docs/spec.md §3.3c)", () => {
    // Accepted before: every slot but a few was passed as late (`missed`), under catchup 'skip' almost all.
    const jittery = { handler: 'log', cron: '* * * * *', tz: 'UTC', jitter: '2m' };
    it.each([
      ['POST', '/v1/timers', { key: 'qp:jitter', ...jittery }],
      ['PUT', keyPath('qp:jitter'), jittery],
      ['PUT', timer, jittery],
      ['POST', '/v1/preview', { key: 'qp:jitter', ...jittery }],
    ])('%s %s: 400 invalid naming the 1 min gap, nothing changed', async (method, path, body) => {
      expect(await refused(method, path, body)).toMatchObject({
        reason: 'invalid',
        field: 'jitter',
        message: 'jitter "2m" is not shorter than the 1 min between this cron\'s slots in UTC',
        fix: expect.stringMatching(/^Write jitter shorter than 1m/),
      });
    });
  });
});
