import { startBullmqWorker } from '../contenders/bullmq';
import { startSundialDispatcher, startSundialRunner, startSundialWorker } from '../contenders/sundial';
import type { RoleName, RoleStarter } from './protocol';

export const ROLES: Record<RoleName, RoleStarter> = {
  'bullmq-worker': startBullmqWorker,
  'sundial-worker': startSundialWorker,
  'sundial-runner': startSundialRunner,
  'sundial-dispatcher': startSundialDispatcher,
};
