import { timerAction } from './timer-action';

export const resume = timerAction('resume', 'resumed');
