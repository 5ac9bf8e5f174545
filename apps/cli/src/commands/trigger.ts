import { timerAction } from './timer-action';

export const trigger = timerAction('trigger', 'triggered');
