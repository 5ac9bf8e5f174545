import { Logger } from '@nestjs/common';
import type { Queue } from 'bullmq';
import type { SundialMetrics, TimerRunner } from '@sundial/redis';
import { OwnRunner } from '../own-runner';
import { HeldConnections } from './held-connections';
import type { DataWatch } from './data-watch';
import { FireLoops, SundialWorker } from './sundial-worker';
import { StartHold } from './start-hold';

/** A promise and the call that resolves it. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * A worker with `dispatch: true` (its dispatcher and reconciler, FireLoops) over stand-ins that record what
 * was started and closed; `dataWatch` and the dispatcher's start wait for the test.
 */
function workerWithLoops() {
  const did: string[] = [];
  const watchOpened = gate<() => Promise<void>>();
  const dispatcherStarted = gate();
  const runner = {
    workerId: 'w',
    attachConsumer: () => undefined,
    start: () => Promise.resolve(did.push('runner.start')).then(() => undefined),
    close: () => Promise.resolve(did.push('runner.close')).then(() => undefined),
  } as unknown as TimerRunner;
  const made = {
    dispatcher: {
      start: () => (did.push('dispatcher.start'), dispatcherStarted.promise),
      close: () => Promise.resolve(did.push('dispatcher.close')).then(() => undefined),
    },
    reconciler: {
      start: () => void did.push('reconciler.start'),
      close: () => Promise.resolve(did.push('reconciler.close')).then(() => undefined),
    },
    backlog: { close: () => Promise.resolve(did.push('backlog.close')).then(() => undefined) },
  } as unknown as ReturnType<ConstructorParameters<typeof FireLoops>[1]>;
  const metrics = {
    trackBacklog: () => (did.push('backlog.track'), () => void did.push('backlog.untrack')),
  } as unknown as SundialMetrics;
  const loops = new FireLoops(metrics, () => made);
  const dataWatch: DataWatch = () => (did.push('watch.open'), watchOpened.promise);
  const worker = new SundialWorker(
    runner,
    [],
    loops,
    { autoStart: false },
    dataWatch,
    [] as Queue[],
    new StartHold(),
    () => () => undefined,
    new HeldConnections(),
    new OwnRunner(),
  );
  const stopWatch = () => Promise.resolve(void did.push('watch.stop'));
  return { worker, did, watchOpened, dispatcherStarted, stopWatch };
}

/**
 * docs/spec.md §4.6, §5.1: a stop while the worker is starting is the shutdown — nothing it would start
 * after that stop's closes may run. Before, the start went on to start the dispatcher and reconciler the
 * stop had just closed (a reconciler passing after the app closed) and tracked the backlog's gauges it had
 * untracked, and said it took fire jobs.
 */
describe('SundialWorker: a stop during its start (dispatch: true)', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('stopped while its data watch opens: starts neither the dispatcher nor the reconciler', async () => {
    const { worker, did, watchOpened, dispatcherStarted, stopWatch } = workerWithLoops();
    dispatcherStarted.open();
    const started = worker.start();
    while (!did.includes('watch.open')) await new Promise(setImmediate);
    const stopped = worker.stop();
    watchOpened.open(stopWatch);
    await expect(started).rejects.toMatchObject({ reason: 'disposed' });
    await stopped;
    expect(did).not.toContain('dispatcher.start');
    expect(did).not.toContain('reconciler.start');
    expect(did).not.toContain('backlog.track');
    expect(did).toContain('watch.stop');
    expect(worker.state).toBe('stopping');
  });

  it('stopped while its dispatcher starts: the reconciler the stop closed is not started, nor the backlog tracked', async () => {
    const { worker, did, watchOpened, dispatcherStarted, stopWatch } = workerWithLoops();
    const started = worker.start();
    watchOpened.open(stopWatch);
    while (!did.includes('dispatcher.start')) await new Promise(setImmediate);
    const stopped = worker.stop();
    while (!did.includes('reconciler.close')) await new Promise(setImmediate);
    dispatcherStarted.open();
    await expect(started).rejects.toMatchObject({ reason: 'disposed' });
    await stopped;
    expect(did).not.toContain('reconciler.start');
    expect(did).not.toContain('backlog.track');
    expect(did).toContain('dispatcher.close');
  });

  it('a start left alone starts them all', async () => {
    const { worker, did, watchOpened, dispatcherStarted, stopWatch } = workerWithLoops();
    watchOpened.open(stopWatch);
    dispatcherStarted.open();
    await worker.start();
    expect(did).toEqual([
      'runner.start',
      'watch.open',
      'dispatcher.start',
      'reconciler.start',
      'backlog.track',
    ]);
    expect(worker.state).toBe('running');
    await worker.stop();
  });
});
