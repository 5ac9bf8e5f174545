import { timerAction } from './timer-action';

export const resume = timerAction('resume', 'resumed', 'resume a paused timer');
