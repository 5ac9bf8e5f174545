import { MAX_TIMEOUT_MS, refusals } from '@sundial/core';

/** Readers for configuration from the environment: a bad value stops the process with a clear message. */
export type Env = Record<string, string | undefined>;

/**
 * The most an integer setting may be unless told: Node's longest timer (2^31−1 ms, ~24.8 days). A
 * longer `setTimeout`/`setInterval` fires after 1 ms, so a period or timeout past it would do the
 * opposite of what was asked (every Redis reply "timed out", a reconciler in a busy loop).
 */
export const MAX_ENV_INT = MAX_TIMEOUT_MS;

/** The highest TCP port: PORT and the like. */
export const MAX_PORT = 65_535;

export function envString(env: Env, name: string, fallback: string): string {
  const value = env[name]?.trim();
  return value ? value : fallback;
}

export function envOptional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/**
 * An integer variable from `min` to `max`; unset or blank is `fallback`. Anything else is the `invalid`
 * refusal (field: the variable) that stops the process at start, its fatal line saying what to write.
 */
export function envInt(env: Env, name: string, fallback: number, min = 0, max = MAX_ENV_INT): number {
  const text = env[name]?.trim();
  if (!text) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw refusals.invalid(
      name,
      `${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(text)}.`,
      `Write ${name} as a whole number from ${min} to ${max}, or leave it out for the default (${fallback}).`,
    );
  }
  return value;
}

/**
 * A switch: `true` or `false`; unset or blank is `fallback`. Anything else (`yes`, `1`, `TRUE`) is the
 * `invalid` refusal: a switch misread as off would go unnoticed.
 */
export function envFlag(env: Env, name: string, fallback: boolean): boolean {
  const text = env[name]?.trim();
  if (!text) return fallback;
  if (text === 'true' || text === 'false') return text === 'true';
  throw refusals.invalid(
    name,
    `${name} must be true or false; got ${JSON.stringify(text)}.`,
    `Write ${name}=true or ${name}=false, or leave it out for the default (${fallback}).`,
  );
}

export function envList(env: Env, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}
