import { refusals, type SundialError } from '@sundial/core';
import { ERROR_EVENTS, type ErrorEvents } from './connection-cause';

/**
 * What ioredis reports when no Sentinel gave it a primary: `All sentinels are unreachable. Retrying from
 * scratch after <n>ms. Last error: <the last Sentinel's own error>` (or `… and retry is disabled. …`).
 * It says that for a Sentinel that answered and refused as well, and retries for ever.
 */
const NO_PRIMARY = /^All sentinels are unreachable\b.* Last error: (.*)$/s;

/**
 * A Sentinel refusing rather than being away, which no wait mends: it knows no primary by the URL's
 * master name, or it refused the connection's AUTH (its own password, not Redis's). The start then fails
 * at once (wait-for-redis.ts) saying which, instead of waiting out its 30 s and calling Redis silent.
 */
export function sentinelRefusal(error: unknown): SundialError | undefined {
  const said = NO_PRIMARY.exec((error as Error | undefined)?.message ?? '')?.[1];
  if (said === undefined) return undefined;
  if (said.includes('No such master')) {
    return refusals.invalid(
      'connection',
      `The Sentinels know no primary by the master name in the Redis URL (${said}).`,
      'End the URL with the name the Sentinels monitor (redis-cli -p 26379 SENTINEL MASTERS lists them): redis+sentinel://s1:26379,s2:26379/<master name>.',
    );
  }
  if (/^(NOAUTH|WRONGPASS|NOPERM)\b/.test(said)) {
    return refusals.invalid(
      'connection',
      `The Sentinels refused the connection (${said}).`,
      "Give the Sentinels' own user and password at the end of the Redis URL, URL-encoded: ?sentinelPassword=<password>, or ?sentinelUsername=<user>&sentinelPassword=<password> (user:password@ before the hosts is Redis's).",
    );
  }
  return undefined;
}

/**
 * Rejects `refused` with the first Sentinel refusal `connection` reports (its commands would wait for a
 * primary for ever meanwhile): for a start's wait for Redis (wait-for-redis.ts) and a repartition.
 */
export function whenSentinelsRefuse(connection: ErrorEvents): { refused: Promise<never>; stop(): void } {
  let reject: (error: SundialError) => void = () => undefined;
  const refused = new Promise<never>((_, rejectWith) => (reject = rejectWith));
  refused.catch(() => undefined);
  const onError = (error: unknown): void => {
    const refusal = sentinelRefusal(error);
    if (refusal) reject(refusal);
  };
  for (const event of ERROR_EVENTS) connection.on?.(event, onError);
  const stop = (): void => {
    for (const event of ERROR_EVENTS) connection.off?.(event, onError);
  };
  return { refused, stop };
}
