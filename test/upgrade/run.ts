// Resolves @sundial/* in the compiled tree (the apps' entry points do the same).
import '../../libs/server/src/register-paths';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, ROOT, startRedis, startRedisCluster } from '@sundial/testing/harness';
import { roll, type RollOrder } from './roll';

/**
 * `npm run upgrade-check -- <old commit>`: builds the old release in a temporary git worktree, then on
 * a private Redis rolls its scheduler and worker to this build and back (docs/operations.md
 * "Upgrading"), workers first and schedulers first side by side (two prefixes), with timers of every
 * kind. Prints what went wrong (a timer lost, early, doubled; a false loss or no-dispatcher line; a loss
 * counter not 0) and exits 1 then. Takes about two and a half minutes after the builds. `--cluster`: on a
 * Redis Cluster of three primaries instead.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const onCluster = args.includes('--cluster');
  const commit = args.find((arg) => !arg.startsWith('-'));
  if (!commit || args.length !== (onCluster ? 2 : 1)) {
    throw new Error(
      'Usage: npm run upgrade-check -- <old commit> [--cluster] (e.g. the previous release tag or hash)',
    );
  }
  const git = (...args: string[]) => execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' }).trim();
  const hash = git('rev-parse', '--verify', `${commit}^{commit}`);
  await ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'sundial-upgrade-'));
  const old = join(dir, 'old');
  git('worktree', 'add', '--detach', old, hash);
  const redis = onCluster ? await startRedisCluster(3) : await startRedis();
  try {
    // the old release's build, with this checkout's packages (hard links: no copy, no download)
    execFileSync('cp', ['-al', join(ROOT, 'node_modules'), join(old, 'node_modules')]);
    console.log(`building ${hash.slice(0, 7)} in ${old}`);
    execFileSync('npm', ['run', 'build'], { cwd: old, stdio: 'inherit' });
    const orders: RollOrder[] = ['workers first', 'schedulers first'];
    const results = await Promise.all(
      orders.map((order, n) => roll(redis.url, join(old, 'dist'), order, `upgrade${n}`)),
    );
    for (const { order, problems } of results) {
      console.log(`${hash.slice(0, 7)} → this build → back, ${order}: ${problems.length} problems`);
      for (const problem of problems) console.log(`  ${problem}`);
    }
    process.exitCode = results.some((result) => result.problems.length > 0) ? 1 : 0;
  } finally {
    await redis.stop();
    git('worktree', 'remove', '--force', old);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
