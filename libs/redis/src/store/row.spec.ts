import type { NormalizedSpec } from '@sundial/core';
import { createdTimer, decodeRow, encodeSpecFields, fieldsFromFlat } from './row';

const once: NormalizedSpec = {
  key: 'invoice:42',
  handler: 'invoice.remind',
  payload: null,
  kind: 'once',
  delayMs: 5000,
  awaitTask: true,
  removeOnComplete: true,
  ifExists: 'error',
  delivery: 'at-least-once',
};

describe('row codec', () => {
  it('leaves defaults out of a pending row so it stays small', () => {
    expect(encodeSpecFields(once)).toEqual({ h: 'invoice.remind', dm: '5000' });
  });

  it('encodes every non-default field of a spec', () => {
    const cron: NormalizedSpec = {
      ...once,
      kind: 'cron',
      delayMs: undefined,
      cron: '0 7 * * MON-FRI',
      tz: 'America/Toronto',
      maxRuns: 3,
      payload: { n: 1 },
      meta: { team: 'billing' },
      awaitTask: false,
      removeOnComplete: false,
      delivery: 'at-most-once',
      timeout: 900_000,
    };
    expect(encodeSpecFields(cron)).toEqual({
      k: 'cron',
      h: 'invoice.remind',
      p: '{"n":1}',
      cr: '0 7 * * MON-FRI',
      tz: 'America/Toronto',
      mr: '3',
      aw: '0',
      rm: '0',
      dl: 'm',
      m: '{"team":"billing"}',
      to: '900000',
    });
    const stored = { ...encodeSpecFields(cron), id: '1p0', key: 'k', sa: '0', d: '60000' };
    expect(decodeRow(stored)).toMatchObject({ kind: 'cron', timeout: 900_000 });
  });

  it('decodes a freshly written row with absent fields (v, s, k too) as their defaults', () => {
    const fields = {
      ...encodeSpecFields(once),
      id: '7p0',
      key: 'invoice:42',
      sa: '1000',
      d: '6000',
    };
    expect(decodeRow(fields)).toEqual({
      id: '7p0',
      key: 'invoice:42',
      version: 1,
      kind: 'once',
      status: 'pending',
      handler: 'invoice.remind',
      payload: null,
      scheduledAt: 1000,
      dueAt: 6000,
      delayMs: 5000,
      runCount: 0,
      awaitTask: true,
      removeOnComplete: true,
      delivery: 'at-least-once',
      lastFiredAt: null,
      lastCompletedAt: null,
      lastErrorAt: null,
      last: null,
    });
  });

  it('decodes run bookkeeping written by the fire path', () => {
    const timer = decodeRow({
      ...encodeSpecFields({
        ...once,
        kind: 'interval',
        delayMs: undefined,
        everyMs: 30000,
        payload: [1, 'a'],
      }),
      id: '3p1',
      key: 'k',
      v: '4',
      s: 'failed',
      sa: '0',
      d: '30000',
      rc: '2',
      lf: '30001',
      le: '30050',
      l: '{"started":30001,"ended":30050,"status":"failed","error":{"message":"boom"}}',
    });
    expect(timer).toMatchObject({
      kind: 'interval',
      everyMs: 30000,
      payload: [1, 'a'],
      runCount: 2,
      lastFiredAt: 30001,
      lastCompletedAt: null,
      lastErrorAt: 30050,
      last: { started: 30001, ended: 30050, status: 'failed', error: { message: 'boom' } },
    });
  });

  it('builds the Timer of a created row exactly as decoding the stored row would', () => {
    const specs: NormalizedSpec[] = [
      once,
      { ...once, delayMs: undefined, atMs: 9000, payload: { n: [1, 'a'] }, meta: { team: 'billing' } },
      { ...once, kind: 'interval', delayMs: undefined, everyMs: 30000, maxRuns: 2, awaitTask: false },
      {
        ...once,
        kind: 'cron',
        delayMs: undefined,
        cron: '0 7 * * *',
        tz: 'UTC',
        removeOnComplete: false,
        delivery: 'at-most-once',
      },
      { ...once, timeout: 30_000 },
    ];
    const created = { id: '7p0', sa: '1000', d: '6000' };
    for (const spec of specs) {
      const fields = encodeSpecFields(spec);
      const stored = { ...fields, ...created, key: spec.key, v: '1', s: 'pending' };
      expect(createdTimer(spec, fields, created)).toStrictEqual(decodeRow(stored));
    }
  });

  it('reads HGETALL-style flat replies', () => {
    expect(fieldsFromFlat(['id', '1p0', 'v', '2'])).toEqual({ id: '1p0', v: '2' });
  });
});
