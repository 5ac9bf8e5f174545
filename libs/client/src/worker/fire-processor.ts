import { Inject, Logger, type Type } from '@nestjs/common';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import {
  type FireJobData,
  fireConsumerOptions,
  FireWorkerErrors,
  type TimerRunner,
  throttleErrors,
} from '@sundial/redis';
import type { Job, Queue } from 'bullmq';
import { START_HOLD, type StartHold } from './start-hold';
import { SUNDIAL_WORKER_OPTIONS } from './sundial-worker';
import type { SundialWorkerModuleOptions } from './sundial-worker-options';

export const FIRE_RUNNER = Symbol('sundial:fire-runner');

/** What the worker service needs of a partition's processor: its BullMQ Worker, made by @nestjs/bullmq. */
export type FireProcessor = WorkerHost;

/**
 * The @nestjs/bullmq processor of one partition queue: BullExplorer makes its BullMQ Worker (connection
 * and prefix from the registered queue, `workerOptions` here, `autorun: false` so it takes jobs only once
 * the runner listens for aborts), and every job goes to the TimerRunner. A class per partition because
 * a processor names its queue in its decorator.
 */
export function fireProcessor(
  partition: number,
  queueName: string,
  configKey: string | undefined,
): Type<FireProcessor> {
  @Processor({ name: queueName, configKey }, { autorun: false })
  class SundialFireProcessor extends WorkerHost {
    private readonly logger = new Logger('Sundial');
    private readonly log = {
      error: (message: string) => this.logger.error(message),
      warn: (message: string) => this.logger.warn(message),
      info: (message: string) => this.logger.log(message),
    };
    /** the Worker's errors, a lost lock a warn (its queue's go through a throttle of their own) */
    private readonly workerErrors = new FireWorkerErrors(`fire worker of partition ${partition}`, this.log);

    constructor(
      @Inject(FIRE_RUNNER) private readonly runner: TimerRunner,
      @InjectQueue(queueName) queue: Queue,
      @Inject(START_HOLD) hold: StartHold,
      @Inject(SUNDIAL_WORKER_OPTIONS) options: SundialWorkerModuleOptions,
    ) {
      super();
      // The worker options come from the options resolved at boot (forRootAsync's factory): BullExplorer
      // reads them from this class when it makes the Worker, once every provider is created.
      Processor(
        { name: queueName, configKey },
        { ...fireConsumerOptions(options), autorun: false },
      )(SundialFireProcessor);
      // Redis away at boot is said once, by the start's wait (wait-for-redis.ts); a failure that outlasts
      // the start is logged with a count of the errors before it.
      this.workerErrors.holdUntil(hold.settled);
      // The registered queue's connection reports an outage too: without a listener BullMQ prints
      // it raw to stderr on every reconnect attempt, outside the app's log format. Both are logged as
      // @sundial/redis error-throttle.ts says: the first error, then a count an interval, the recovery.
      throttleErrors(queue, `fire queue of partition ${partition}`, this.log).holdUntil(hold.settled);
    }

    process(job: Job<FireJobData>): Promise<void> {
      return this.runner.processFireJob(partition, job.data);
    }

    @OnWorkerEvent('error')
    onError(error: Error): void {
      // BullExplorer set the worker before it attached this listener; watched from this first error, only
      // a later `ready` of its connection is a recovery (this error may be no reconnect: a Worker's own)
      this.workerErrors.recoversWith(this.worker, 'error').error(error);
    }
  }
  Object.defineProperty(SundialFireProcessor, 'name', { value: `SundialFireProcessor${partition}` });
  return SundialFireProcessor;
}
