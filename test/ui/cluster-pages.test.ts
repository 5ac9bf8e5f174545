import { useChromiumCluster } from './chromium-fixture';
import { describeActionAnswers } from './pages/action-answers';
import { describeActsAsShown } from './pages/acts-as-shown';
import { describeServerNow } from './pages/server-now';
import { describeSupportWalk } from './pages/support-walk';
import { describeTimerTruth } from './pages/timer-truth';
import { describeWriteRefusals } from './pages/write-refusals';
import { describeWriteRetry } from './pages/write-retry';

/**
 * The operator UI's page suites (test/ui/pages), on one private Redis, one scheduler, one worker and one
 * chromium for them all; each describe block has a browser context and page of its own (usePage), and
 * its own keys. As suites of their own, each booted those itself: 7 × 2 app processes and 7 chromiums,
 * ~9 s of CPU a suite before its first test, on a CI host where the run's wall time is its CPU time
 * over 2 cores (docs/design.md "Where the run's CPU goes"). Suites whose apps need an env of their own
 * (schedule-again's schedules file) or no worker keep their own cluster.
 */
const shared = useChromiumCluster();

describeActionAnswers(shared);
describeActsAsShown(shared);
describeServerNow(shared);
describeSupportWalk(shared);
describeTimerTruth(shared);
describeWriteRefusals(shared);
describeWriteRetry(shared);
