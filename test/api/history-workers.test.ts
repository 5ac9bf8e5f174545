import type { LedgerEntry, Timer } from '@sundial/core';
import { defineCommands, FireCommands, SundialKeys } from '@sundial/redis';
import { keyPath, type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import Redis from 'ioredis';
import { type RunningApp, startScheduler } from '../local-cluster';
import { contractChecker, type OpenApiDocument } from './openapi-contract';

/**
 * docs/spec.md §3.9 over HTTP: a late completion refused (`stale`) names the worker that sent it, so an
 * operator reading `GET /v1/timers/:key/history` after a worker went silent past its lease can tell whose
 * completion it was — and the answer is what the OpenAPI document describes (openapi-contract.test.ts
 * checks the rest of the API). A real scheduler (its reconciler puts the run back); the worker is the
 * store's calls, as a worker whose lease ran out sends them.
 */
describe('HTTP API: history names the worker of a late completion', () => {
  let redis: RedisServer;
  let raw: Redis;
  let scheduler: RunningApp;

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    defineCommands(raw);
    scheduler = await startScheduler(redis.url);
  });

  afterAll(async () => {
    await scheduler?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  it("a run put back after its worker's lease ran out: that worker's late completion is `stale`, with its workerId", async () => {
    const api = scheduler.api;
    const spec = { key: 'late', handler: 'h', delay: 0, removeOnComplete: false };
    const { body: timer } = await api<Timer>('POST', '/v1/timers', spec);
    const commands = new FireCommands(raw, new SundialKeys());
    const ref = { id: timer.id, key: timer.key, version: 1, due: timer.dueAt };
    // a 100 ms lease never renewed: the scheduler's reconciler (every 200 ms) puts the run back
    await waitFor(async () => (await commands.claim(0, 100, 'worker-a', [ref]))[0].kind === 'claimed', {
      what: "worker A's claim",
    });
    const history = () => api<{ key: string; entries: LedgerEntry[] }>('GET', `${keyPath('late')}/history`);
    await waitFor(async () => (await history()).body.entries.some((entry) => entry.event === 'lost'), {
      what: 'the run put back',
    });
    const [late] = await commands.complete(0, [
      { ...ref, runCount: 1, mode: 'held', outcome: 'ok', missed: 0, overlap: 0, workerId: 'worker-a' },
    ]);
    expect(late).toEqual({ kind: 'stale', reason: 'status' });

    const reply = await history();
    // newest first: the refused completion, then the run put back (the hand-offs between them left out:
    // the scheduler's dispatcher may hand the row off before the claim)
    const runs = reply.body.entries.filter((entry) => entry.event !== 'armed');
    expect(runs.map(({ event, workerId, reason }) => [event, workerId, reason])).toEqual([
      ['stale', 'worker-a', 'status'],
      ['lost', 'worker-a', 'requeued'],
      ['claimed', 'worker-a', undefined],
      ['scheduled', undefined, undefined],
    ]);
    const document = (await api<OpenApiDocument>('GET', '/docs-json')).body;
    const check = contractChecker(document);
    const answer = { status: reply.status, body: reply.body, contentType: 'application/json' };
    expect(check('get /v1/timers/{key}/history', answer)).toEqual([]);
  });
});
