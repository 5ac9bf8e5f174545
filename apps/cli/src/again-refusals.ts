import type { Timer } from '@sundial/core';
// The module itself, not @sundial/core's index: that loads the whole engine at every invocation.
import { keyScope } from '../../../libs/core/src/browser/key-fix';
import { ownerWords } from '../../../libs/core/src/browser/again-spec';
import { CliError, EXIT } from './cli-error';
import { keyArgument, optionArgument } from './cli-fix';

/**
 * `sundial again`'s refusals in the CLI's terms (docs/spec.md §5.6): each with reason, field, message and
 * a fix naming the command to run instead; exit 1, as a refusal of the scheduler's. Nothing is sent.
 */

/** No row under the key: a timer removed when it ended (a one-shot, by default) left none to copy. */
export function noRowToCopy(key: string, refused: CliError): CliError {
  const word = keyArgument(key);
  const scope = keyScope(key);
  const list = scope === '' ? 'sundial list' : `sundial list ${optionArgument('prefix', scope)}`;
  return new CliError(
    {
      reason: 'not-found',
      field: 'key',
      message: `no timer under key ${JSON.stringify(key)} to schedule again`,
      fix:
        `Check the key; ${list} lists the timers under it. A timer removed when it ended (a one-shot after its run, ` +
        `by default) has no row to copy: sundial history ${word} shows what it ran; schedule it with sundial schedule ` +
        '(--remove-on-complete false keeps it for sundial again).',
    },
    EXIT.refused,
    refused.status,
  );
}

/** A live timer (pending, running, paused): it has not ended, so there is nothing to schedule again. */
export function stillLive(timer: Timer): CliError {
  const word = keyArgument(timer.key);
  const ways: Record<string, string> = {
    pending: `Run sundial trigger ${word} to run it now, without moving its schedule.`,
    paused: `Run sundial resume ${word} to bring it back, then sundial trigger ${word} to run it now.`,
    running: `Wait for the run to end (sundial get ${word} shows its status).`,
  };
  const way = ways[timer.status] ?? `Run sundial get ${word} to see it.`;
  return new CliError(
    {
      reason: 'duplicate-key',
      field: 'key',
      message: `${timer.key} is ${timer.status}: a live timer holds the key, there is nothing to schedule again`,
      fix: `${way} sundial again is for a kept timer that ended (completed or failed).`,
    },
    EXIT.refused,
  );
}

/** A row a declarative source owns (`meta.sundialOwner`): its owner writes it, and the API refuses the mark. */
export function ownedRow(timer: Timer, owned: { owner: string; app?: string }): CliError {
  const how: Record<string, string> = {
    'schedules-file':
      'Change its row in the schedules file (SUNDIAL_SCHEDULES_FILE): the scheduler writes it again.',
    'distributed-cron': 'Change its @DistributedCron declaration and start the app: it writes it again.',
    'distributed-interval':
      'Change its @DistributedInterval declaration and start the app: it writes it again.',
  };
  return new CliError(
    {
      reason: 'invalid',
      field: 'meta.sundialOwner',
      message: `${timer.key} belongs to ${ownerWords(owned.owner, owned.app)} (meta.sundialOwner): it is not scheduled again from the command line`,
      fix: how[owned.owner] ?? `Have its owner "${owned.owner}" write it again.`,
    },
    EXIT.refused,
  );
}
