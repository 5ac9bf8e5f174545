import { startBullmqWorker } from '../contenders/bullmq';
import { startSundialDispatcher, startSundialWorker } from '../contenders/sundial';
import type { RoleName, RoleStarter } from './protocol';

export const ROLES: Record<RoleName, RoleStarter> = {
  'bullmq-worker': startBullmqWorker,
  'sundial-worker': startSundialWorker,
  'sundial-dispatcher': startSundialDispatcher,
};
