import type { SundialLogger } from '@sundial/core';
import type { SundialKeys } from '../store/keys';
import type { RedisClient } from './connection';

/** The prefixes warned of in this process: a scheduler's client, dispatcher and runner say it once. */
const warned = new Set<string>();

/**
 * Warns at start when this prefix lies under another installation's (`a:b` under `a`, whose
 * `a:partitions` exists): `a`'s ACL user (`~a:*`, `&a:*`) reaches every key and channel of `a:b`, and `a`'s
 * request pins `a:request:<id>` share names with a prefix `a:request` (docs/operations.md "Several
 * installations on one Redis"). One GET per `:` in the prefix, side by side; a read this user may not
 * make (NOPERM: an ACL user kept to its own prefix) or that fails tells nothing, and is left.
 */
export async function warnNestedPrefix(
  redis: RedisClient,
  keys: SundialKeys,
  logger: Pick<SundialLogger, 'warn'>,
): Promise<void> {
  const { prefix } = keys;
  if (warned.has(prefix)) return;
  const outer = [...prefix.matchAll(/:/g)].map((match) => prefix.slice(0, match.index)).filter(Boolean);
  const found = await Promise.all(
    outer.map((other) =>
      redis.get(`${other}:partitions`).then(
        (count) => (count === null ? null : other),
        () => null,
      ),
    ),
  );
  const under = found.filter((other): other is string => other !== null);
  if (under.length === 0 || warned.has(prefix)) return;
  warned.add(prefix);
  logger.warn(
    `Sundial prefix '${prefix}' lies under prefix '${under[0]}' of another installation on this Redis: '${under[0]}'s ACL user (~${under[0]}:*) reaches its keys and channels, and its request pins may take this prefix's names`,
    {
      prefix,
      under: under[0],
      fix: `Give this installation a prefix that no other is followed by ':' in (e.g. '${prefix.replace(/:/g, '-')}'): docs/operations.md "Several installations on one Redis".`,
    },
  );
}
