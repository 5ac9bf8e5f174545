import { timerAction } from './timer-action';

export const pause = timerAction(
  'pause',
  'paused',
  'pause a pending timer (it keeps its place; resume brings it back)',
);
