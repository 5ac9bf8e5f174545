import { silentLogger } from '@sundial/core';
import { oddThrownValues, waitFor } from '@sundial/testing/harness';
import { eventually, useFirePath } from './fire-fixture';

const fire = useFirePath();

/** Defect 5 of issue 8: whatever a handler throws or rejects with lands `failed`; the runner goes on. */
describe('fire path: a handler that throws an odd value', () => {
  it('records every odd thrown or rejected value as failed, and keeps running later timers', async () => {
    const cluster = await fire.cluster();
    const handlers: Record<string, () => unknown> = { fine: () => undefined };
    const cases = oddThrownValues().flatMap(([name, make], i) => [
      {
        name: `throws ${name}`,
        key: `throw:${i}`,
        handler: () => {
          throw make();
        },
      },
      { name: `rejects with ${name}`, key: `reject:${i}`, handler: () => Promise.reject(make()) },
    ]);
    for (const { key, handler } of cases) handlers[key] = handler;
    await cluster.dispatcher();
    await cluster.runner(handlers);
    for (const { key } of cases) {
      await cluster.timers.schedule({ key, handler: key, delay: 0, removeOnComplete: false });
    }
    for (const { name, key } of cases) {
      const failed = await eventually(cluster.events, { type: 'failed', key }).catch(() => {
        throw new Error(`no failed event for a handler that ${name}`);
      });
      expect(failed.error).toEqual({ message: expect.any(String) });
      const timer = await cluster.timers.get(key);
      expect(timer).toMatchObject({ status: 'failed', last: { status: 'failed', error: failed.error } });
    }
    await cluster.timers.schedule({ key: 'after', handler: 'fine', delay: 0 });
    await eventually(cluster.events, { type: 'completed', key: 'after' });
  });

  it('awaits a handler that returns a thenable that is not a Promise', async () => {
    const cluster = await fire.cluster();
    // settles after the handler has returned: taken as done at once, the run would complete ok
    const thenable = (): PromiseLike<void> => ({
      then: (_resolve, reject) => {
        queueMicrotask(() => reject?.(new Error('thenable rejected')));
        return Promise.resolve() as never;
      },
    });
    await cluster.dispatcher();
    await cluster.runner({ thenable });
    await cluster.timers.schedule({ key: 'thenable', handler: 'thenable', delay: 0 });
    const failed = await eventually(cluster.events, { type: 'failed', key: 'thenable' });
    expect(failed.error).toEqual({ message: 'thenable rejected' });
  });

  it("logs the stack of what a handler threw on its 'run failed' line, not of Sundial's own refusals", async () => {
    const cluster = await fire.cluster();
    const failedLines: Record<string, unknown>[] = [];
    const logger = {
      ...silentLogger,
      warn: (message: string, fields?: Record<string, unknown>) => {
        if (message === 'run failed') failedLines.push(fields ?? {});
      },
    };
    function composeDigest(): never {
      throw new Error('smtp down');
    }
    await cluster.dispatcher();
    await cluster.runner({ digest: composeDigest }, { logger });
    await cluster.timers.schedule({ key: 'thrown', handler: 'digest', delay: 0 });
    await cluster.timers.schedule({ key: 'unknown', handler: 'nobody', delay: 0 });
    await waitFor(() => failedLines.length === 2 || undefined, { what: 'two run failed lines' });
    const byKey = Object.fromEntries(failedLines.map((fields) => [fields.key, fields]));
    expect(byKey.thrown).toMatchObject({ error: { message: 'smtp down' } });
    expect(byKey.thrown.stack).toMatch(/^Error: smtp down\n\s+at composeDigest /);
    expect(byKey.unknown).toMatchObject({ error: { reason: 'unknown-handler' } });
    expect(byKey.unknown).not.toHaveProperty('stack');
    // the stack is for the log: the row keeps the message
    expect((await cluster.timers.history('thrown')).find((e) => e.event === 'failed')).not.toHaveProperty(
      'stack',
    );
  });

  it('fails a handler name this worker lacks with unknown-handler, even one Object.prototype has', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    await cluster.runner({ fine: () => undefined });
    for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      await cluster.timers.schedule({ key: `odd:${name}`, handler: name, delay: 0 });
    }
    for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      const failed = await eventually(cluster.events, { type: 'failed', key: `odd:${name}` });
      expect(failed.error).toMatchObject({ reason: 'unknown-handler' });
    }
  });
});
