// relative, as the CLI's other value imports: the @sundial/* paths are mapped only for repartition
import { MAX_TIMEOUT_MS } from '../../../libs/core/src/clock';
import { CliError, EXIT } from './cli-error';

/**
 * The longest wait Node's timers keep (2^31−1 ms, ~24.8 days): a longer one fires after 1 ms, so every
 * request or Redis reply would be given up at once, as "no answer within <n> ms".
 */
export const MAX_WAIT_MS = MAX_TIMEOUT_MS;

/**
 * A bound on a wait, in ms, from the environment variable `name` (SUNDIAL_TIMEOUT_MS for a request to
 * the scheduler, SUNDIAL_COMMAND_TIMEOUT_MS for a reply of Redis): `defaultMs` when unset; anything but
 * a whole number from 1 to MAX_WAIT_MS is a bad command line, before anything is sent.
 */
export function waitBound(env: NodeJS.ProcessEnv, name: string, defaultMs: number): number {
  const value = env[name];
  if (value === undefined || value.trim() === '') return defaultMs;
  if (/^\d+$/.test(value.trim()) && Number(value) > 0 && Number(value) <= MAX_WAIT_MS) return Number(value);
  throw new CliError(
    {
      reason: 'invalid',
      field: name,
      message: `${name} ${JSON.stringify(value)} is not a whole number of milliseconds from 1 to ${MAX_WAIT_MS}`,
      fix: `Set ${name} to e.g. ${defaultMs} (at most ${MAX_WAIT_MS}, Node's longest timer), or unset it for ${defaultMs / 1000} s.`,
    },
    EXIT.usage,
  );
}
