import { createBullmqContender } from './bullmq';
import type { ContenderFactory } from './contender';
import { createSundialContender, createSundialRunnerContender } from './sundial';

/** Both sides of every scenario, each run on its own freshly flushed Redis. */
export const CONTENDERS: readonly ContenderFactory[] = [createSundialContender, createBullmqContender];

/**
 * Measured beside the two contenders by the fire-path scenarios (lateness, fire throughput): Sundial's
 * handlers on a bare TimerRunner, to show what SundialWorkerModule's @nestjs/bullmq path costs (issue 9).
 */
export const FIRE_PATH_VARIANTS: readonly ContenderFactory[] = [createSundialRunnerContender];
