import { timerAction } from './timer-action';

export const pause = timerAction('pause', 'paused');
