import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withCliCluster } from './cli-cluster';
import { AGAIN_SCHEDULES_FILE, describeAgain } from './commands/again';
import { describeAnswers } from './commands/answers';
import { describeMorePages } from './commands/more-pages';
import { describeReplayed } from './commands/replayed';
import { describeRerun } from './commands/rerun';
import { describeServerNow } from './commands/server-now';

const dir = mkdtempSync(join(tmpdir(), 'sundial-cli-commands-'));
const schedulesFile = join(dir, 'schedules.yaml');
writeFileSync(schedulesFile, AGAIN_SCHEDULES_FILE);

/**
 * The CLI's suites that need a running cluster (test/cli/commands), on one private Redis, one scheduler
 * (API token `cli-test-token`, following `sundial again`'s schedules file) and one worker for them all;
 * each describe block on keys of its own. As suites of their own, each booted those itself: 4 × 2 app
 * processes and 4 Redis servers, ~3.5 s of CPU a suite before its first test (docs/design.md "Each
 * suite's CPU, and the boots shared").
 */
const sundial = withCliCluster('cli-test-token', { SUNDIAL_SCHEDULES_FILE: schedulesFile });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeAnswers(sundial);
describeRerun(sundial);
describeReplayed(sundial);
describeMorePages(sundial);
describeAgain(sundial);
describeServerNow(sundial);
