import type { Timer } from '@sundial/core';
import { onlyOptions, option, requireKey } from '../args';
import { CliError, EXIT } from '../cli-error';
import type { Command } from '../command';
import { type SundialHttp, timerPath } from '../http';

type Action = 'pause' | 'resume' | 'trigger';

/**
 * pause and resume change nothing when the timer is already paused, or not paused (docs/spec.md §3.4):
 * the API answers with the timer either way, so the CLI reads its version first and tells the two apart.
 */
const NO_CHANGE: Partial<Record<Action, (timer: Timer) => string>> = {
  pause: (timer) => `already ${timer.status}`,
  resume: () => 'not paused',
};

/**
 * pause, resume and trigger: `POST /v1/timers/:key/<action>`, answered with the timer. An
 * `--idempotency-key` makes a retry safe (docs/spec.md §5.2).
 */
export function timerAction(action: Action, done: string): Command {
  const usage = `sundial ${action} <key> [--idempotency-key <id>] [--json]`;
  return {
    usage,
    async run({ args, api, out }) {
      onlyOptions(args, ['idempotency-key'], usage);
      const key = requireKey(args, usage);
      const noChange = NO_CHANGE[action];
      const before = noChange && (await readTimer(api, key))?.version;
      const retryKey = option(args, 'idempotency-key');
      const { body: timer, replayed } = await api.write<Timer>('POST', timerPath(key, action), {
        headers: idempotencyHeader(retryKey),
        key,
      });
      // Every change makes a new version: the same one means this call changed nothing (a pause or
      // resume retried says so too); a trigger retried would read as a run asked for now: said a retry,
      // with the state the first call answered (the timer may have moved on since).
      const state = `status ${timer.status}, version ${timer.version}`;
      const what =
        noChange && timer.version === before
          ? `${timer.key} was ${noChange(timer)}: nothing changed: ${state}`
          : replayed
            ? retryText(retryKey, `${done} ${timer.key}, answered then: ${state}`)
            : `${done} ${timer.key}: ${state}`;
      out.result(timer, () => what);
    },
  };
}

/** The timer under `key` now; undefined when it is refused (not found: the caller says what follows). */
export async function readTimer(api: SundialHttp, key: string): Promise<Timer | undefined> {
  try {
    return await api.request<Timer>('GET', timerPath(key), { key });
  } catch (error) {
    if (error instanceof CliError && error.exitCode === EXIT.refused) return undefined;
    throw error;
  }
}

/**
 * What a command says of an answer given again for its --idempotency-key (the API's
 * `Idempotent-Replayed`, or what the command read around it): `firstDid`, what its first call did.
 */
export function retryText(retryKey: string | undefined, firstDid: string): string {
  return `nothing changed: a retry of --idempotency-key ${retryKey}, whose first call ${firstDid}`;
}

export function idempotencyHeader(id: string | undefined): Record<string, string> {
  return id === undefined ? {} : { 'idempotency-key': id };
}
