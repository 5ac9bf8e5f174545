import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

// libs/testing/src, or dist/libs/testing/src when compiled (npm run chaos runs from dist)
const above = join(__dirname, '..', '..', '..');
export const ROOT = basename(above) === 'dist' ? dirname(above) : above;
export const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.build-stamp');
const LOCK = join(DIST, '.build-lock');
const SOURCES = [
  'apps',
  'libs',
  'scripts',
  'examples',
  'test/chaos',
  'test/fixtures/fastify',
  'test/fixtures/failed-boot',
];
/** A lock whose owner is unknown (no pid written: a run older than the pid, or killed between mkdir and write) is taken over after this. */
const LOCK_STALE_MS = 5 * 60_000;

/**
 * Suites that run the apps as real processes need `dist`: build it (`npm run build`) when a source
 * is newer than the last build. A lock directory serializes suites that ask at the same time.
 */
export async function ensureBuilt(): Promise<void> {
  mkdirSync(DIST, { recursive: true });
  await acquireBuildLock(LOCK);
  try {
    if (!isStale()) return;
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
    writeFileSync(STAMP, new Date().toISOString());
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

function isStale(): boolean {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  return SOURCES.some((dir) => newestSource(join(ROOT, dir)) > built);
}

function newestSource(dir: string): number {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (/\.(ts|lua|js|json|html|css)$/.test(entry.name))
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Takes the lock directory `lock`, with this process's pid in it. A lock left by a killed run (Ctrl-C of
 * jest) is taken over at once when its owner's pid is not alive; it blocked every suite for 5 minutes
 * before. One without a readable pid is taken over once LOCK_STALE_MS old.
 */
export async function acquireBuildLock(lock: string): Promise<void> {
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Removed, then taken again only after the wait below: another waiter that read the same dead
      // owner at the same moment removes this lock, not the one made after it.
      if (abandoned(lock)) rmSync(lock, { recursive: true, force: true });
      await new Promise((wake) => setTimeout(wake, 200));
    }
  }
}

/** The lock's owner is gone: its pid is not alive, or (no pid written) the lock is older than LOCK_STALE_MS. */
function abandoned(lock: string): boolean {
  const owner = ownerOf(lock);
  if (owner !== undefined) return !isAlive(owner);
  const made = statSync(lock, { throwIfNoEntry: false });
  return made !== undefined && Date.now() - made.mtimeMs > LOCK_STALE_MS;
}

function ownerOf(lock: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined; // not written yet (its owner is between mkdir and write), or by an older run
  }
}

/** Signal 0 only asks: ESRCH says no such process; EPERM, one of another user's, alive. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
