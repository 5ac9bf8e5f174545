// Resolves @sundial/* in the compiled tree (the apps' entry points do the same).
import '../libs/server/src/register-paths';
import { DIAGNOSTICS, watchEventLoop } from './diagnostics';
import type { ChildConfig, ChildMessage, ParentMessage, RunRecord } from './processes/protocol';
import { ROLES } from './processes/roles';
import { watchRunTimings } from './run-timings';

/**
 * A bench child process (forked by Fleet): runs one role — a raw BullMQ Worker, Sundial's TimerRunner or
 * Sundial's Dispatcher — and reports every handler start to the parent over IPC, batched so reporting costs
 * the worker little and never touches the Redis being measured.
 */
const REPORT_EVERY_MS = 25;

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]) as ChildConfig;
  let pending: RunRecord[] = [];
  const report = (): void => {
    if (pending.length === 0) return;
    send({ type: 'runs', runs: pending });
    pending = [];
  };
  const reporter = setInterval(report, REPORT_EVERY_MS);
  const role = await ROLES[config.role](config, (run) => pending.push(run));
  const loop = watchEventLoop();
  const timings = DIAGNOSTICS ? watchRunTimings() : undefined;

  process.on('message', (message: ParentMessage) => {
    if (message.type !== 'stop') return;
    const delay = loop.stop();
    if (delay) console.log(`  ${config.role} process: ${delay}`);
    for (const line of timings?.stop() ?? []) console.log(`  ${config.role} process: ${line}`);
    void role.close().then(() => {
      clearInterval(reporter);
      report();
      send({ type: 'stopped' });
      process.disconnect();
    });
  });
  send({ type: 'ready' });
}

function send(message: ChildMessage): void {
  process.send?.(message);
}

main().catch((error: unknown) => {
  console.error(`bench worker process failed: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
