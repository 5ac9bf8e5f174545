import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '@sundial/testing/harness';

const operations = (): string => readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');

/** The words of a `redis-cli …` command as written in a Markdown code block or span. */
const words = (command: string): string[] =>
  command.replace(/\\\n/g, ' ').replace(/\\\|/g, '|').trim().split(/\s+/);

/**
 * The arguments of the `redis-cli … ACL SETUSER <user> …` in the code block after the comment
 * `<!-- <marker>: … -->` of docs/operations.md, with `password` for its placeholders (`>CHANGE-ME…`).
 */
function documentedSetUser(marker: string, user: string, password: string): string[] {
  const block = new RegExp(`<!-- ${marker}:[^>]*-->\\s*\`\`\`bash\\n([\\s\\S]*?)\`\`\``).exec(operations());
  if (!block) throw new Error(`docs/operations.md has no ACL block after its <!-- ${marker}: --> marker`);
  const command = words(block[1]);
  const at = command.indexOf('ACL');
  if (command[0] !== 'redis-cli' || command.slice(at, at + 3).join(' ') !== `ACL SETUSER ${user}`)
    throw new Error(
      `docs/operations.md's ${marker} block is not a redis-cli ACL SETUSER ${user}: ${block[1]}`,
    );
  return [
    user,
    ...command
      .slice(at + 3)
      .map((word) => word.replace(/^'|'$/g, '').replace(/^>CHANGE-ME\S*$/, `>${password}`)),
  ];
}

/**
 * The arguments of the `ACL SETUSER` in docs/operations.md ("A least-privilege ACL user"), with
 * `password` for its placeholder: `redis.call('ACL', 'SETUSER', ...documentedAcl(password))`.
 */
export function documentedAcl(password: string): string[] {
  return documentedSetUser('acl', 'sundial', password);
}

/** What docs/operations.md adds to that user on every node of a Redis Cluster (`ACL SETUSER` adds). */
export function documentedClusterAcl(): string[] {
  return documentedSetUser('acl-cluster', 'sundial', '');
}

/** The Sentinels' own user of docs/operations.md ("With Sentinel"), with `password` for its placeholder. */
export function documentedSentinelAcl(password: string): string[] {
  return documentedSetUser('acl-sentinel', 'sundial-sentinel', password);
}

/**
 * The arguments of the `ACL SETUSER` that docs/operations.md ("Changing the partition count") gives
 * the apps' user for the time of a repartition: `redis.call('ACL', ...documentedRepartitionGrant())`.
 */
export function documentedRepartitionGrant(): string[] {
  const span = /`redis-cli (ACL SETUSER sundial [^`]*)`[^`]*for the time of the\s+repartition/.exec(
    operations(),
  );
  if (!span) throw new Error('docs/operations.md names no ACL SETUSER for the time of the repartition');
  return words(span[1]).slice(1);
}
