import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

// libs/testing/src, or dist/libs/testing/src when compiled (npm run chaos runs from dist)
const above = join(__dirname, '..', '..', '..');
export const ROOT = basename(above) === 'dist' ? dirname(above) : above;
export const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.build-stamp');
const LOCK = join(DIST, '.build-lock');
const SOURCES = ['apps', 'libs', 'scripts', 'examples', 'test/chaos', 'test/fixtures/fastify'];
const LOCK_STALE_MS = 5 * 60_000;

/**
 * Suites that run the apps as real processes need `dist`: build it (`npm run build`) when a source
 * is newer than the last build. A lock directory serializes suites that ask at the same time.
 */
export async function ensureBuilt(): Promise<void> {
  mkdirSync(DIST, { recursive: true });
  await acquireLock();
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

async function acquireLock(): Promise<void> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock left by a killed run would block forever: take it over once clearly abandoned.
      if (Date.now() - statSync(LOCK, { throwIfNoEntry: false })!.mtimeMs > LOCK_STALE_MS) {
        rmSync(LOCK, { recursive: true, force: true });
      }
      await new Promise((wake) => setTimeout(wake, 200));
    }
  }
}
