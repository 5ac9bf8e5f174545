import { startBullmqWorker } from '../contenders/bullmq';
import { startSundialDispatcher, startSundialWorker } from '../contenders/sundial';
import type { ChildConfig, RoleName, RunRecord } from './protocol';

export interface RunningRole {
  close(): Promise<void>;
}

export type RoleStarter = (config: ChildConfig, record: (run: RunRecord) => void) => Promise<RunningRole>;

export const ROLES: Record<RoleName, RoleStarter> = {
  'bullmq-worker': startBullmqWorker,
  'sundial-worker': startSundialWorker,
  'sundial-dispatcher': startSundialDispatcher,
};
