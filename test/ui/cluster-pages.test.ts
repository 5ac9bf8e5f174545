import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useChromiumCluster } from './chromium-fixture';
import { describeActionAnswers } from './pages/action-answers';
import { describeActsAsShown } from './pages/acts-as-shown';
import { describeAwayAndBack } from './pages/away-and-back';
import { describePagePlaces } from './pages/page-places';
import { describePausedReschedule } from './pages/paused-reschedule';
import { describeScheduleAgain, SCHEDULE_AGAIN_FILE } from './pages/schedule-again';
import { describeServerNow } from './pages/server-now';
import { describeSupportWalk } from './pages/support-walk';
import { describeTimerTruth } from './pages/timer-truth';
import { describeTimeZones } from './pages/time-zones';
import { describeWriteRefusals } from './pages/write-refusals';
import { describeWriteRetry } from './pages/write-retry';

const dir = mkdtempSync(join(tmpdir(), 'sundial-ui-pages-'));
const schedulesFile = join(dir, 'schedules.yaml');
writeFileSync(schedulesFile, SCHEDULE_AGAIN_FILE);

/**
 * The operator UI's page suites (test/ui/pages), on one private Redis, one scheduler (no token, following
 * Schedule again's schedules file), one worker and one chromium for them all; each describe block has a
 * browser context and page of its own (usePage), and keys of its own. As suites of their own, each booted
 * those itself: 8 × 2 app processes and 8 chromiums, ~9 s of CPU a suite before its first test, on a CI
 * host where the run's wall time is its CPU time over 2 cores (docs/design.md "Where the run's CPU goes").
 */
const shared = useChromiumCluster({ SUNDIAL_SCHEDULES_FILE: schedulesFile });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeActionAnswers(shared);
describeActsAsShown(shared);
describeAwayAndBack(shared);
describePagePlaces(shared);
describePausedReschedule(shared);
describeScheduleAgain(shared);
describeServerNow(shared);
describeSupportWalk(shared);
describeTimerTruth(shared);
describeTimeZones(shared);
describeWriteRefusals(shared);
describeWriteRetry(shared);
