import { createBullmqContender } from './bullmq';
import type { ContenderFactory } from './contender';
import { createSundialContender } from './sundial';

/** Both sides of every scenario, each run on its own freshly flushed Redis. */
export const CONTENDERS: readonly ContenderFactory[] = [createSundialContender, createBullmqContender];
