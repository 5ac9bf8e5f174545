import { keyPath } from '@sundial/testing/harness';
import { request } from 'node:http';
import { type Backend, useBackendScheduler } from './backend-scheduler';

/** An answer with the header this suite is about: `Idempotent-Replayed`, undefined when absent. */
interface Answer {
  status: number;
  body: unknown;
  replayed: string | undefined;
}

/**
 * docs/spec.md §5.2: a retry with the same `Idempotency-Key` is answered as the first call was — status
 * and body alike — and says so in `Idempotent-Replayed: true`. Before, nothing told the two apart: a batch
 * retried read as N timers scheduled again (the CLI printed so), a trigger as a run asked for now, a
 * reschedule as a new due time. Every write route, over Redis and over the in-memory engine alike.
 */
describe.each<Backend>(['redis', 'engine'])('%s: Idempotent-Replayed on a retry', (backend) => {
  // over Redis, 4 partitions: a batch's and a scope's cancel are several calls, each answered again
  const scheduler = useBackendScheduler(backend, 4);

  const send = (method: string, path: string, body?: unknown, idempotencyKey?: string) =>
    new Promise<Answer>((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string> = {
        ...(text !== undefined && { 'content-type': 'application/json' }),
        ...(idempotencyKey !== undefined && { 'idempotency-key': idempotencyKey }),
      };
      const sent = request(`${scheduler.url}${path}`, { method, headers, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const replayed = response.headers['idempotent-replayed'] as string | undefined;
          const status = response.statusCode ?? 0;
          resolve({ status, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), replayed });
        });
      });
      sent.on('error', reject);
      sent.end(text);
    });

  const spec = (key: string, schedule: object = { delay: '1h' }) => ({ key, handler: 'log', ...schedule });
  const cron = { cron: '0 0 * * *', tz: 'UTC' };

  /** Sent twice with one Idempotency-Key: the first answer plain, the second the same, marked replayed. */
  const retried = async (method: string, path: string, body: unknown, idempotencyKey: string) => {
    const first = await send(method, path, body, idempotencyKey);
    expect(first.status).toBeLessThan(300);
    expect(first.replayed).toBeUndefined();
    expect(await send(method, path, body, idempotencyKey)).toEqual({ ...first, replayed: 'true' });
    return first;
  };

  it('POST of a batch, of one spec, and PUT (create and replace): the retry is marked, a new key is not', async () => {
    const batch = [spec('rp:b1'), spec('rp:b2', { every: '1h' }), spec('rp:b3', cron)];
    const batched = await retried('POST', '/v1/timers', batch, 'rp-batch');
    expect(batched.status).toBe(200);
    // over Redis the batch spans partitions (ids <seq>p<partition>): each partition's call was answered again
    const partitions = (batched.body as { items: { id: string }[] }).items.map(({ id }) => id.split('p')[1]);
    if (backend === 'redis') expect(new Set(partitions).size).toBeGreaterThan(1);
    expect((await retried('POST', '/v1/timers', spec('rp:one'), 'rp-one')).status).toBe(201);
    expect((await retried('PUT', keyPath('rp:put'), { handler: 'log', delay: '1h' }, 'rp-put1')).status).toBe(
      201,
    );
    expect((await retried('PUT', keyPath('rp:put'), { handler: 'log', delay: '2h' }, 'rp-put2')).status).toBe(
      200,
    );
    // the same request under a new key runs now: ifExists keep answers the timer there, unmarked
    const kept = await send('POST', '/v1/timers', [{ ...spec('rp:b1'), ifExists: 'keep' }], 'rp-keep');
    expect(kept).toMatchObject({ status: 200, replayed: undefined });
  });

  it('pause, resume, trigger, reschedule, backfill and cancel on each kind: the retry is marked', async () => {
    for (const [kind, schedule] of Object.entries({ once: { delay: '1h' }, every: { every: '1h' }, cron })) {
      const key = `rp:${kind}`;
      expect((await send('POST', '/v1/timers', spec(key, schedule))).status).toBe(201);
      const path = keyPath(key);
      for (const action of ['pause', 'resume'])
        await retried('POST', `${path}/${action}`, undefined, `rp-${kind}-${action}`);
      await retried('POST', `${path}/reschedule`, { delay: '2h' }, `rp-${kind}-reschedule`);
      // each leaves a run going over the engine (a running timer refuses the others): last but the cancel
      if (kind === 'cron') {
        const range = { from: '2026-01-01T00:00:00Z', to: '2026-01-03T00:00:00Z' };
        await retried('POST', `${path}/backfill`, range, `rp-${kind}-backfill`);
      } else await retried('POST', `${path}/trigger`, undefined, `rp-${kind}-trigger`);
      expect((await retried('DELETE', path, undefined, `rp-${kind}-cancel`)).body).toEqual({
        cancelled: true,
      });
    }
  });

  it('DELETE by prefix: the retry is marked; without a key, or refused, nothing is', async () => {
    for (const key of ['rp:scope:1', 'rp:scope:2']) await send('POST', '/v1/timers', spec(key));
    const first = await retried('DELETE', '/v1/timers?prefix=rp:scope:', undefined, 'rp-scope');
    expect(first.body).toEqual({ cancelled: 2 });
    expect(await send('DELETE', '/v1/timers?prefix=rp:scope:')).toMatchObject({ replayed: undefined });
    // a refusal is not remembered: its retry runs again, and is refused again, unmarked
    for (let i = 0; i < 2; i++) {
      const refused = await send('POST', `${keyPath('rp:none')}/pause`, undefined, 'rp-none');
      expect(refused).toMatchObject({ status: 404, replayed: undefined });
    }
  });

  it('/docs-json lists Idempotent-Replayed on the successes of every route that takes Idempotency-Key', async () => {
    const document = (await send('GET', '/docs-json')).body as {
      paths: Record<string, Record<string, { parameters?: { name: string }[]; responses: object }>>;
    };
    const listed: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!operation.parameters?.some((p) => p.name === 'Idempotency-Key')) continue;
        for (const [status, response] of Object.entries(operation.responses)) {
          const headers = (response as { headers?: object }).headers ?? {};
          if ('Idempotent-Replayed' in headers) listed.push(`${method} ${path} ${status}`);
          else expect(status).not.toMatch(/^2/);
        }
      }
    }
    expect(listed.length).toBeGreaterThanOrEqual(10);
  });
});
