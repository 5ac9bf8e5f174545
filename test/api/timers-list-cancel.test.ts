import type { ListResult, Timer } from '@sundial/core';
import { type ErrorBody, keyPath, waitFor } from '@sundial/testing/harness';
import { useCluster } from './cluster-fixture';
import { contractChecker, type OpenApiDocument } from './openapi-contract';

/** docs/spec.md §3.6 and §5.2 over HTTP: the registry, list and cancelAll, on a real scheduler and worker. */
describe('HTTP API: registry, list, cancelAll', () => {
  const { api, statusOf } = useCluster();

  describe('registry, list, cancelAll', () => {
    it('check and snapshot follow the live ids', async () => {
      const created = await api<Timer>('POST', '/v1/timers', {
        key: 'reg:1',
        handler: 'record',
        delay: '1h',
      });
      expect((await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids).toContain(created.body.id);
      await api('DELETE', keyPath('reg:1'));
      expect((await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids).not.toContain(created.body.id);
      expect((await api('GET', `/v1/registry/${created.body.id}`)).body).toEqual({
        id: created.body.id,
        live: false,
      });
    });

    it('lists by prefix and status, page by page with limit and cursor', async () => {
      for (let n = 1; n <= 5; n++)
        await api('POST', '/v1/timers', { key: `ls:${n}`, handler: 'record', delay: '1h' });
      await api('POST', `${keyPath('ls:3')}/pause`);
      const keys: string[] = [];
      let cursor = '';
      for (let page = 0; page < 10; page++) {
        const reply = await api<ListResult>(
          'GET',
          `/v1/timers?prefix=ls:&limit=2&cursor=${encodeURIComponent(cursor)}`,
        );
        expect(reply.body.items.length).toBeLessThanOrEqual(2);
        keys.push(...reply.body.items.map((timer) => timer.key));
        if (!reply.body.nextCursor) break;
        cursor = reply.body.nextCursor;
      }
      // in key order (test/cli/commands/answers.ts pages over two partitions)
      expect(keys).toEqual(['ls:1', 'ls:2', 'ls:3', 'ls:4', 'ls:5']);
      const paused = await api<ListResult>('GET', '/v1/timers?prefix=ls:&status=paused');
      expect(paused.body.items.map((timer) => timer.key)).toEqual(['ls:3']);
      expect((await api<ErrorBody>('GET', '/v1/timers?limit=zero')).body.error).toMatchObject({
        reason: 'invalid',
        field: 'limit',
      });
      expect((await api<ErrorBody>('GET', '/v1/timers?status=sleeping')).body.error).toMatchObject({
        reason: 'invalid',
        field: 'status',
      });
    });

    it("refuses a cursor in the HTTP caller's terms: not a page's nextCursor, or one of another query", async () => {
      for (const key of ['cur:a:1', 'cur:a:2', 'cur:b:1'])
        await api('POST', '/v1/timers', { key, handler: 'record', delay: '1h' });
      const bogus = await api<ErrorBody>('GET', '/v1/timers?cursor=bogus');
      expect(bogus.status).toBe(400);
      // it said "The cursor is not one list() returned.", a call the HTTP caller never made
      expect(bogus.body.error).toEqual({
        reason: 'invalid',
        field: 'cursor',
        message: 'The cursor is not the nextCursor of a GET /v1/timers page.',
        fix: 'Pass the nextCursor of the previous GET /v1/timers page, or leave cursor out to start over.',
      });
      const { nextCursor } = (await api<ListResult>('GET', '/v1/timers?prefix=cur:&limit=1')).body;
      const other = await api<ErrorBody>('GET', `/v1/timers?prefix=cur:b:&cursor=${nextCursor}`);
      expect(other.body.error).toEqual({
        reason: 'invalid',
        field: 'cursor',
        message:
          'The cursor is the nextCursor of a GET /v1/timers page of another prefix, status or dueBefore.',
        fix: 'Send the cursor with the prefix, status and dueBefore of the page that returned it, or leave cursor out to start over.',
        detail: { code: 'cursor-other-list' },
      });
      // and /docs-json says so where it said only "a nextCursor"
      const docs = await api<OpenApiDocument>('GET', '/docs-json');
      const cursor = docs.body.paths['/v1/timers'].get.parameters?.find((p) => p.name === 'cursor');
      expect(cursor?.description).toContain('cursor-other-list');
    });

    it('lists by due with dueBefore as an ISO instant or epoch ms; a bad one is refused', async () => {
      const now = Date.now();
      for (const [key, minutes] of [
        ['due:b', 20],
        ['due:a', 40],
        ['due:c', 90],
      ] as const)
        await api('POST', '/v1/timers', { key, handler: 'record', at: now + minutes * 60_000 });
      const hour = new Date(now + 3_600_000).toISOString();
      for (const dueBefore of [hour, String(now + 3_600_000)]) {
        const reply = await api<ListResult>('GET', `/v1/timers?prefix=due:&dueBefore=${dueBefore}`);
        expect(reply.body.items.map((timer) => timer.key)).toEqual(['due:b', 'due:a']);
      }
      expect((await api<ErrorBody>('GET', '/v1/timers?dueBefore=tomorrow')).body.error).toMatchObject({
        reason: 'invalid',
        field: 'dueBefore',
      });
    });

    it('cancelAll by scope returns the count and touches nothing outside the scope', async () => {
      for (const key of ['scope:a:1', 'scope:a:2', 'scope:a:3', 'scope:ab:1', 'scope:b:1']) {
        await api('POST', '/v1/timers', { key, handler: 'record', delay: '1h' });
      }
      expect(await api('DELETE', '/v1/timers?prefix=scope:a:')).toMatchObject({
        status: 200,
        body: { cancelled: 3 },
      });
      expect(await statusOf('scope:a:1')).toBe('gone');
      expect(await statusOf('scope:ab:1')).toBe('pending');
      expect(await statusOf('scope:b:1')).toBe('pending');
    });

    it('DELETE of a timer kept after it ended: 200, cancelled false and the status of the row removed', async () => {
      const kept = { handler: 'record', delay: 1, removeOnComplete: false };
      await api('POST', '/v1/timers', { key: 'kept:done', ...kept });
      await api('POST', '/v1/timers', { key: 'kept:bad', ...kept, handler: 'fail' });
      await api('POST', '/v1/timers', { key: 'kept:live', handler: 'record', delay: '1h' });
      await waitFor(
        async () =>
          (await statusOf('kept:done')) === 'completed' && (await statusOf('kept:bad')) === 'failed',
        { what: 'kept:done completed and kept:bad failed' },
      );
      // A write on it is refused 404 naming how it ended (it said "No live timer", as for no row), documented
      const ended = await api<ErrorBody>('POST', `${keyPath('kept:bad')}/trigger`);
      expect([ended.status, ended.body.error]).toMatchObject([
        404,
        { reason: 'not-found', detail: { status: 'failed' } },
      ]);
      expect(ended.body.error.fix).toBe(
        'Schedule it again to run it: POST /v1/timers with its spec. A new timer under the key replaces the row it ended with; GET /v1/timers/kept%3Abad/history shows its runs.',
      );
      const paused = await api<ErrorBody>('POST', `${keyPath('kept:done')}/pause`);
      expect([paused.status, paused.body.error.detail]).toEqual([404, { status: 'completed' }]);
      // It answered 404 "no live timer", though it had removed the row.
      const once = { headers: { 'Idempotency-Key': 'del-kept-1' } };
      const removed = await api('DELETE', keyPath('kept:done'), undefined, once);
      expect([removed.status, removed.body]).toEqual([200, { cancelled: false, removed: 'completed' }]);
      expect(await statusOf('kept:done')).toBe('gone');
      // retried with the same Idempotency-Key: the first answer again, not a 404
      const again = await api('DELETE', keyPath('kept:done'), undefined, once);
      expect([again.status, again.body]).toEqual([200, removed.body]);
      const failed = await api('DELETE', keyPath('kept:bad'));
      expect([failed.status, failed.body]).toEqual([200, { cancelled: false, removed: 'failed' }]);
      expect(await statusOf('kept:bad')).toBe('gone');
      const live = await api('DELETE', keyPath('kept:live'));
      expect([live.status, live.body]).toEqual([200, { cancelled: true }]);
      // both 200 bodies are the ones /docs-json documents (test/api/openapi-contract.test.ts)
      const check = contractChecker((await api<OpenApiDocument>('GET', '/docs-json')).body);
      const documented = ({ status, body }: { status: number; body: unknown }) =>
        check('delete /v1/timers/{key}', { status, body, contentType: 'application/json' });
      expect([removed, failed, live].flatMap(documented)).toEqual([]);
      const refused = ({ status, body }: { status: number; body: unknown }) =>
        check('post /v1/timers/{key}/trigger', { status, body, contentType: 'application/json' });
      expect(refused(ended)).toEqual([]);
      // nothing left under either key: 404, as for a key never scheduled
      expect((await api('DELETE', keyPath('kept:bad'))).status).toBe(404);
      expect((await api('DELETE', keyPath('kept:done'))).status).toBe(404);
    });

    it.each([
      ['no prefix', '/v1/timers', 'prefix'],
      ['a bare ?prefix', '/v1/timers?prefix', 'prefix'],
      ['an empty prefix=', '/v1/timers?prefix=', 'prefix'],
      ['all other than true', '/v1/timers?all=1', 'all'],
      ['a prefix and all=true', '/v1/timers?prefix=scope:&all=true', 'prefix'],
    ])(
      '%s: 400 invalid, saying how to cancel all on purpose; nothing cancelled',
      async (_what, path, field) => {
        const live = (await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids.length;
        expect(live).toBeGreaterThan(0);
        expect(await api<ErrorBody>('DELETE', path)).toMatchObject({
          status: 400,
          body: {
            error: {
              reason: 'invalid',
              field,
              fix: expect.stringContaining('?all=true to cancel every timer'),
            },
          },
        });
        expect((await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids).toHaveLength(live);
      },
    );

    it('`all=true` cancels every timer', async () => {
      const live = (await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids.length;
      expect(live).toBeGreaterThan(0);
      expect(await api('DELETE', '/v1/timers?all=true')).toMatchObject({
        status: 200,
        body: { cancelled: live },
      });
      expect((await api<{ ids: string[] }>('GET', '/v1/registry')).body.ids).toEqual([]);
    });
  });
});
