import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '@sundial/testing/harness';

const operations = (): string => readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');

/** The words of a `redis-cli …` command as written in a Markdown code block or span. */
const words = (command: string): string[] =>
  command.replace(/\\\n/g, ' ').replace(/\\\|/g, '|').trim().split(/\s+/);

/**
 * The arguments of the `ACL SETUSER` in docs/operations.md ("A least-privilege ACL user"), with
 * `password` for its placeholder: `redis.call('ACL', 'SETUSER', ...documentedAcl(password))`.
 */
export function documentedAcl(password: string): string[] {
  const block = /<!-- acl:[^>]*-->\s*```bash\n([\s\S]*?)```/.exec(operations());
  if (!block) throw new Error('docs/operations.md has no ACL block after its <!-- acl: --> marker');
  const command = words(block[1]);
  if (command.slice(0, 4).join(' ') !== 'redis-cli ACL SETUSER sundial')
    throw new Error(`docs/operations.md's ACL block is not a redis-cli ACL SETUSER sundial: ${block[1]}`);
  return [
    'sundial',
    ...command.slice(4).map((word) => word.replace(/^'|'$/g, '').replace('>CHANGE-ME', `>${password}`)),
  ];
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
