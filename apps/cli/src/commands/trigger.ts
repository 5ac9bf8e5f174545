import { timerAction } from './timer-action';

export const trigger = timerAction(
  'trigger',
  'triggered',
  'run a pending timer now, without moving its schedule',
);
