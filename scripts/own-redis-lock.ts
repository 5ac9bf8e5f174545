/**
 * The lock around `npm start`'s check-and-start of its own redis-server (start.ts): two `npm start`s at
 * one instant both found no pidfile of a live redis-server in ./.sundial/redis (neither had started
 * yet) and both started one writing that directory. `npm-start.lock` there holds the pid of the start
 * that checks and starts; it appears whole (written beside it, then hard-linked: `link` fails when the
 * lock exists) and goes once that start's redis-server answers (its pidfile written, which the next
 * start's check sees) or when that start exits. One whose pid is gone (a start killed meanwhile) is stale
 * and taken over.
 */
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OWN_REDIS_DIR, processAlive } from './own-redis-dir';

export const START_LOCK = join(OWN_REDIS_DIR, 'npm-start.lock');

/**
 * Takes the lock: undefined once taken (released by `releaseStartLock` or this process's exit), or the
 * pid of the live start that holds it.
 */
export function takeStartLock(): number | undefined {
  mkdirSync(OWN_REDIS_DIR, { recursive: true });
  const mine = `${START_LOCK}.${process.pid}`;
  writeFileSync(mine, `${process.pid}\n`);
  try {
    // a few rounds: each ends taken, held by a live start, or after a change by another start meanwhile
    for (let round = 0; round < 10; round++) {
      try {
        linkSync(mine, START_LOCK);
        process.on('exit', releaseStartLock);
        return undefined;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = pidIn(START_LOCK);
      if (holder === undefined) continue; // released meanwhile
      if (alive(holder)) return holder;
      const live = removeStale(holder);
      if (live !== undefined) return live;
    }
    throw new Error(`could not take ${START_LOCK}: remove it if no npm start runs here`);
  } finally {
    rmSync(mine, { force: true });
  }
}

/** Removes the lock when it is this process's. */
export function releaseStartLock(): void {
  process.off('exit', releaseStartLock);
  if (pidIn(START_LOCK) === process.pid) rmSync(START_LOCK, { force: true });
}

/**
 * Removes the lock of `stale` (a pid gone). Moved aside first, so that a lock another start took over
 * meanwhile is not removed: that one is put back, and its pid returned while it lives.
 */
function removeStale(stale: number): number | undefined {
  const aside = `${START_LOCK}.${process.pid}.stale`;
  try {
    renameSync(START_LOCK, aside);
  } catch {
    return undefined; // gone meanwhile: take it again
  }
  const moved = pidIn(aside);
  const taken = moved !== undefined && moved !== stale;
  if (taken) {
    try {
      linkSync(aside, START_LOCK);
    } catch {
      // a third start took the lock meanwhile: that one holds it
    }
  }
  rmSync(aside, { force: true });
  return taken && alive(moved) ? moved : undefined;
}

/** The pid a lock holds; 0 for one that holds none (no start's: stale); undefined when it is gone. */
function pidIn(file: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : 0;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : 0;
}

function alive(pid: number): boolean {
  return pid > 0 && processAlive(pid);
}
