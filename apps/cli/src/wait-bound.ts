import { CliError, EXIT } from './cli-error';

/**
 * A bound on a wait, in ms, from the environment variable `name` (SUNDIAL_TIMEOUT_MS for a request to
 * the scheduler, SUNDIAL_COMMAND_TIMEOUT_MS for a reply of Redis): `defaultMs` when unset; anything but
 * a whole number above 0 is a bad command line, before anything is sent.
 */
export function waitBound(env: NodeJS.ProcessEnv, name: string, defaultMs: number): number {
  const value = env[name];
  if (value === undefined || value.trim() === '') return defaultMs;
  if (/^\d+$/.test(value.trim()) && Number(value) > 0) return Number(value);
  throw new CliError(
    {
      reason: 'invalid',
      field: name,
      message: `${name} ${JSON.stringify(value)} is not a whole number of milliseconds above 0`,
      fix: `Set ${name} to e.g. ${defaultMs}, or unset it for ${defaultMs / 1000} s.`,
    },
    EXIT.usage,
  );
}
