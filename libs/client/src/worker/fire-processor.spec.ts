import { Logger } from '@nestjs/common';
import type { TimerRunner } from '@sundial/redis';
import type { Queue } from 'bullmq';
import { EventEmitter } from 'node:events';
import { fireProcessor } from './fire-processor';
import { StartHold } from './start-hold';

/** A BullMQ Worker or Queue as the processor sees it: its connection, whose status and `ready` we drive. */
function source(status: string) {
  const client = Object.assign(new EventEmitter(), { status });
  return { client, on: () => undefined, getBackend: () => ({ client: Promise.resolve(client) }) };
}

describe("SundialWorkerModule's fire processor: its Worker's errors", () => {
  let lines: string[];

  beforeEach(() => {
    lines = [];
    jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((m: unknown) => void lines.push(`E ${String(m)}`));
    jest.spyOn(Logger.prototype, 'log').mockImplementation((m: unknown) => void lines.push(`I ${String(m)}`));
  });

  afterEach(() => jest.restoreAllMocks());

  /** The processor of partition 0, its Worker (set by BullExplorer before any error) on `worker`. */
  function processor(worker: ReturnType<typeof source>, hold = new StartHold()) {
    const Processor = fireProcessor(0, 'fire:0', undefined);
    const made = new Processor({} as TimerRunner, source('ready') as unknown as Queue, hold, {});
    // @nestjs/bullmq's WorkerHost keeps the Worker BullExplorer made in `_worker`; its Worker's `error`
    // events reach `onError` (the class's, not on the FireProcessor type the factory returns)
    return Object.assign(made, { _worker: worker, hold }) as unknown as {
      onError(error: Error): void;
      hold: StartHold;
    };
  }

  /** The module's start has ended: errors are logged as they come. */
  async function started<P>(made: P & { hold: StartHold }): Promise<P> {
    made.hold.end();
    await made.hold.settled;
    return made;
  }

  it('an error of the Worker while its connection is up is no outage: no `connected again` after it', async () => {
    const worker = source('ready');
    (await started(processor(worker))).onError(new Error('Unexpected reply from the Worker'));
    await Promise.resolve(); // the client's promise settles
    await Promise.resolve();
    expect(lines).toEqual(['E fire worker of partition 0: Unexpected reply from the Worker']);
  });

  it('a first error while its connection is lost: `connected again` at its next ready', async () => {
    const worker = source('reconnecting');
    (await started(processor(worker))).onError(new Error('connect ECONNREFUSED 127.0.0.1:6390'));
    await Promise.resolve();
    await Promise.resolve();
    worker.client.status = 'ready';
    worker.client.emit('ready');
    expect(lines).toEqual([
      'E fire worker of partition 0: connect ECONNREFUSED 127.0.0.1:6390',
      'I fire worker of partition 0: connected again',
    ]);
  });

  it("errors during the module's start are counted, not logged; one after it is, with their count", async () => {
    // Before: Redis away at boot gave an error line from the Worker (and one from its queue) before the
    // start's one `waiting up to … for Redis` line, for the same expected wait.
    const worker = source('reconnecting');
    const made = processor(worker);
    const { hold } = made;
    made.onError(new Error('connect ECONNREFUSED 127.0.0.1:6390'));
    made.onError(new Error('connect ECONNREFUSED 127.0.0.1:6390'));
    expect(lines).toEqual([]);
    hold.end();
    await hold.settled;
    made.onError(new Error('connect ECONNREFUSED 127.0.0.1:6390'));
    expect(lines).toEqual([
      'E fire worker of partition 0: connect ECONNREFUSED 127.0.0.1:6390 (2 earlier errors not logged)',
    ]);
  });
});
