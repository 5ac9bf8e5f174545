import { refusals } from '@sundial/core';

/**
 * Refuses a key prefix with a brace (or an empty one) before anything is written under it. Redis hashes
 * a key by its first `{…}`, so a brace in the prefix would move every partition's hash tag (on a Redis
 * Cluster all partitions in one slot), and a prefix such as `a:{p1}:x` puts its keys under another
 * installation's partition base `a:{p1}:`, whose repartition scans (`a:{p1}:*`) would take and delete
 * them. SundialModule's options refuse the same; this holds for the apps' SUNDIAL_PREFIX, RedisTimers,
 * the fire path and repartition().
 */
export function checkKeyPrefix(prefix: unknown): string {
  if (typeof prefix === 'string' && prefix !== '' && !/[{}]/.test(prefix)) return prefix;
  throw refusals.invalid(
    'prefix',
    `The key prefix ${JSON.stringify(prefix)} is not a non-empty string without "{" or "}": Redis would hash the keys by the braces, not by Sundial's partition tags, and a prefix such as 'a:{p1}:x' lands among the keys of prefix 'a'.`,
    'Write the prefix (SUNDIAL_PREFIX, the prefix option) without braces, e.g. "sundial" or "billing-sundial", or leave it out for the default "sundial".',
  );
}
