import type { Timer } from '@sundial/core';
import { keyPath } from '@sundial/testing/harness';
import { useScheduler } from './scheduler-fixture';

interface Operation {
  responses: Record<string, { description: string }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

/**
 * docs/spec.md §5.2: /docs-json describes each refusal as the route gives it. Every route shared one text
 * per status: a 409 "inactive (the timer is running or paused)" on reschedule and pause, which answer a
 * paused timer 200 (reschedule resumes it, pause leaves it paused), and "duplicate-key (POST without
 * ifExists)" on routes that never give it; a 404 "a finished one-shot included" on GET and DELETE, which
 * answer a kept finished timer 200 (GET reads it, DELETE removes its row).
 */
describe('OpenAPI: each route describes the refusals it gives', () => {
  const app = useScheduler();
  const { api } = app;
  let document: Document;
  const described = (path: string, method: string, status: number) =>
    document.paths[path][method].responses[String(status)].description;

  beforeAll(async () => {
    document = (await api<Document>('GET', '/docs-json')).body;
  });

  it('409: duplicate-key on POST only; inactive while running on reschedule and pause, running or paused on trigger and backfill', async () => {
    expect(described('/v1/timers', 'post', 409)).toBe(
      'duplicate-key: a live timer under the key (ifExists error, the default)',
    );
    for (const route of ['reschedule', 'pause']) {
      expect(described(`/v1/timers/{key}/${route}`, 'post', 409)).toBe(
        'inactive: the timer is running (detail.status); a paused timer is answered',
      );
    }
    for (const route of ['trigger', 'backfill']) {
      expect(described(`/v1/timers/{key}/${route}`, 'post', 409)).toBe(
        'inactive: the timer is running or paused (detail.status)',
      );
    }
    // what the texts say of a paused timer
    await api('POST', '/v1/timers', { key: 'rt:paused', handler: 'log', every: '1h' });
    const paused = await api<Timer>('POST', `${keyPath('rt:paused')}/pause`);
    expect((await api('POST', `${keyPath('rt:paused')}/pause`)).status).toBe(200);
    expect((await api('POST', `${keyPath('rt:paused')}/trigger`)).status).toBe(409);
    const rescheduled = await api<Timer>('POST', `${keyPath('rt:paused')}/reschedule`, { delay: '1m' });
    expect([paused.body.status, rescheduled.status, rescheduled.body.status]).toEqual([
      'paused',
      200,
      'pending',
    ]);
  });

  it('404: GET and DELETE answer a kept finished timer; the writes on a live timer refuse it', () => {
    expect(described('/v1/timers/{key}', 'get', 404)).toBe(
      'not-found: no timer under the key (one that ended, kept by removeOnComplete: false, is answered)',
    );
    expect(described('/v1/timers/{key}', 'delete', 404)).toBe(
      'not-found: no timer under the key (the row of one that ended, kept by removeOnComplete: false, is removed: 200)',
    );
    for (const route of ['reschedule', 'pause', 'resume', 'trigger', 'backfill']) {
      expect(described(`/v1/timers/{key}/${route}`, 'post', 404)).toBe(
        'not-found: no live timer under the key (one that ended, kept by removeOnComplete: false, too: detail.status)',
      );
    }
    expect(described('/v1/timers/{key}/history', 'get', 404)).toBe(
      'not-found: no timer, tombstone or ledger under the key',
    );
    for (const route of ['next', 'describe']) {
      expect(described(`/v1/timers/{key}/${route}`, 'get', 404)).toBe(
        'not-found: no timer under the key (one that ended, kept by removeOnComplete: false, is answered)',
      );
    }
  });
});
