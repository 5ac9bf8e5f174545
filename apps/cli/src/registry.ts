import type { Command } from './command';
import { backfill } from './commands/backfill';
import { cancel } from './commands/cancel';
import { get } from './commands/get';
import { history } from './commands/history';
import { list } from './commands/list';
import { next } from './commands/next';
import { pause } from './commands/pause';
import { preview } from './commands/preview';
import { repartition } from './commands/repartition';
import { reschedule } from './commands/reschedule';
import { resume } from './commands/resume';
import { schedule } from './commands/schedule';
import { trigger } from './commands/trigger';

/** Every command, in the order `sundial help` lists them. A new command is one file plus one line here. */
export const COMMANDS: readonly Command[] = [
  list,
  get,
  history,
  next,
  preview,
  schedule,
  cancel,
  reschedule,
  pause,
  resume,
  trigger,
  backfill,
  repartition,
];
