import type { INestApplicationContext } from '@nestjs/common';
import type { LogFields } from '@sundial/core';
import { exitOnSignal } from './exit-on-signal';

/** exitOnSignal over an app whose close resolves, with process.exit recorded instead of taken. */
function harness() {
  const lines: { message: string; fields?: LogFields }[] = [];
  const record = (message: string, fields?: LogFields) => void lines.push({ message, fields });
  const logger = { error: record, warn: record, info: record, debug: record };
  let exited: (code: number) => void = () => undefined;
  const exit = new Promise<number>((resolve) => (exited = resolve));
  const spy = jest.spyOn(process, 'exit').mockImplementation(((code: number) => exited(code)) as never);
  const listeners = { SIGTERM: process.listeners('SIGTERM'), SIGINT: process.listeners('SIGINT') };
  const app = { close: () => Promise.resolve() } as unknown as INestApplicationContext;
  const { shutdown } = exitOnSignal(app, logger, 60_000);
  const restore = () => {
    spy.mockRestore();
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      for (const listener of process.listeners(signal)) {
        if (!listeners[signal].includes(listener)) process.removeListener(signal, listener);
      }
    }
  };
  return { lines, exit, shutdown, restore };
}

describe('exitOnSignal', () => {
  it('a shutdown the process starts itself (a repartition) names its reason, not a signal', async () => {
    const { lines, exit, shutdown, restore } = harness();
    try {
      shutdown({ reason: 'repartition' });
      expect(await exit).toBe(0);
      expect(lines).toEqual([
        { message: 'shutting down', fields: { reason: 'repartition' } },
        { message: 'shut down cleanly', fields: { reason: 'repartition' } },
      ]);
    } finally {
      restore();
    }
  });

  it('SIGTERM: the lines name the signal', async () => {
    const { lines, exit, restore } = harness();
    try {
      process.emit('SIGTERM', 'SIGTERM');
      expect(await exit).toBe(0);
      expect(lines.map((line) => line.fields)).toEqual([{ signal: 'SIGTERM' }, { signal: 'SIGTERM' }]);
    } finally {
      restore();
    }
  });
});
