/**
 * The lock around `npm start`'s check-and-start of its own redis-server (start.ts): two `npm start`s at
 * one instant both found no pidfile of a live redis-server in ./.sundial/redis (neither had started
 * yet) and both started one writing that directory. `npm-start.lock` there is held from that check until
 * that start's redis-server answers (its pidfile written, which the next start's check sees) or until
 * that start exits. One whose start is gone (killed meanwhile: its pid dead) is stale and taken over.
 *
 * The lock is a directory; the start that holds it is the one whose entry is in it: a file named by its
 * token, `<pid>.<random>` (unique to that take). Only three calls ever change it, each atomic:
 * - take: rename its own directory, holding only its entry, to `npm-start.lock`. rename(2) replaces only
 *   a missing or empty directory (ENOTEMPTY/EEXIST on one with an entry), so it succeeds only while no
 *   start holds the lock, and leaves exactly one holder.
 * - release: unlink its own entry (by its token), then rmdir the lock (which fails, and is left, if
 *   another start took the emptied lock meanwhile).
 * - takeover: unlink the entry of a start whose pid is gone, by its token. That removes that entry and no
 *   other: of two starts that both saw it, one removes it and the other's unlink finds nothing; a live
 *   start's entry, even under a reused pid, has another token.
 * So an entry leaves the lock only by its own start's release or after its pid was seen dead, and while a
 * live start's entry is in it no other take succeeds: at most one start holds the lock, in every
 * interleaving. The race of the former design (a live lock moved aside to be checked, and a third start
 * linking its own in that window) has no counterpart: no call here moves or removes a lock that may be
 * live. With a stale lock and starts A, B, C racing: A and B see the dead entry; whichever unlinks it
 * first, it is gone once, and the lock is then empty: of A's, B's and C's renames the first takes it and
 * the others fail on its entry, then see that start alive and stop.
 * A start killed anywhere leaves no lock that stops the next: killed holding it, its dead pid's entry is
 * taken over; killed between a takeover and its take, or in its release, the lock is empty (free). Killed
 * before its take, it leaves its own `npm-start.lock.<token>` directory, which no take reads and the next
 * take removes (its pid dead: no start can rename it any more; a live start's is left alone).
 * The lock file an `npm start` of an earlier version left (its pid as text) is read as that start's
 * entry: its live pid is named; a dead one's file is unlinked, which removes no directory, so a start
 * that took the lock meanwhile keeps it.
 * A reader may see a state a moment old: an empty lock (the next rename decides), a dead entry already
 * removed (its unlink finds nothing) or a holder that has just released (that start is named, to run npm
 * start again): none makes a second holder. The steps are generators, one file-system call between two
 * `yield`s, so that test/api/npm-start-lock-steps.test.ts interleaves takers at every point.
 */
import { randomBytes } from 'node:crypto';
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { OWN_REDIS_DIR, processAlive } from './own-redis-dir';

export const START_LOCK = join(OWN_REDIS_DIR, 'npm-start.lock');

/** This process's entry in START_LOCK while it holds it. */
let held: string | undefined;

/**
 * Takes the lock: undefined once taken (released by `releaseStartLock` or this process's exit), or the
 * pid of the live start that holds it.
 */
export function takeStartLock(): number | undefined {
  mkdirSync(OWN_REDIS_DIR, { recursive: true });
  const token = `${process.pid}.${randomBytes(4).toString('hex')}`;
  const holder = run(takeLock(START_LOCK, token));
  if (holder === undefined) {
    held = token;
    process.on('exit', releaseStartLock);
  }
  return holder;
}

/** Removes the lock when it is this process's. */
export function releaseStartLock(): void {
  process.off('exit', releaseStartLock);
  if (held !== undefined) run(releaseLock(START_LOCK, held));
  held = undefined;
}

/** A take of `lock` by `token` (`<pid>.<random>`), step by step: ends as `takeStartLock`. */
export function* takeLock(lock: string, token: string): Generator<void, number | undefined> {
  removeDeadTakes(lock);
  const mine = `${lock}.${token}`;
  mkdirSync(mine);
  writeFileSync(join(mine, token), '');
  try {
    // a few rounds: each ends taken, held by a live start, or after a change by another start meanwhile
    for (let round = 0; round < 10; round++) {
      yield;
      if (renamed(mine, lock)) return undefined;
      yield;
      const holder = entryIn(lock);
      if (holder === undefined) continue; // released meanwhile
      const pid = Number.parseInt(holder.name, 10);
      if (pid > 0 && processAlive(pid)) return pid;
      yield;
      if (holder.olderFile) removeOlderLock(lock);
      else rmSync(join(lock, holder.name), { force: true }); // that dead start's entry only, if still there
    }
    throw new Error(`could not take ${lock}: remove it (rm -r) if no npm start runs here`);
  } finally {
    rmSync(mine, { recursive: true, force: true }); // gone once taken: left only by a take that failed
  }
}

/** The release of `lock` by the take of `token`, step by step. */
export function* releaseLock(lock: string, token: string): Generator<void, void> {
  rmSync(join(lock, token), { force: true });
  yield;
  try {
    rmdirSync(lock);
  } catch (error) {
    // taken by another start meanwhile (not empty: theirs), or already gone
    if (!hasCode(error, ['ENOTEMPTY', 'EEXIST', 'ENOENT'])) throw error;
  }
}

/** Removes the `<lock>.<token>` directories of takes whose start was killed before it took the lock. */
function removeDeadTakes(lock: string): void {
  const dir = dirname(lock);
  const prefix = `${basename(lock)}.`;
  for (const name of readdirSync(dir)) {
    const pid = name.startsWith(prefix) ? Number.parseInt(name.slice(prefix.length), 10) : 0;
    if (pid > 0 && !processAlive(pid)) rmSync(join(dir, name), { recursive: true, force: true });
  }
}

/** Runs steps to their end: in a process, one call after the other. */
function run<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Whether `from` became `to`: false when `to` is a lock with an entry (or a file, an older start's). */
function renamed(from: string, to: string): boolean {
  try {
    renameSync(from, to);
    return true;
  } catch (error) {
    if (hasCode(error, ['ENOTEMPTY', 'EEXIST', 'ENOTDIR'])) return false;
    throw error;
  }
}

/**
 * The entry in a lock; undefined when it has none or is gone. A lock file of an older `npm start` (before
 * the lock was a directory) holds its start's pid: that text, as `olderFile`.
 */
function entryIn(lock: string): { name: string; olderFile?: true } | undefined {
  try {
    const name = readdirSync(lock)[0];
    return name === undefined ? undefined : { name };
  } catch (error) {
    if (hasCode(error, ['ENOENT'])) return undefined;
    if (!hasCode(error, ['ENOTDIR'])) throw error;
  }
  try {
    return { name: readFileSync(lock, 'utf8').trim(), olderFile: true };
  } catch (error) {
    // gone meanwhile, or a directory again (a start took it after another removed the file)
    if (hasCode(error, ['ENOENT', 'EISDIR'])) return undefined;
    throw error;
  }
}

/**
 * Removes an older start's lock file whose pid is gone. unlink(2) removes no directory (EISDIR on Linux,
 * EPERM on macOS): when another start removed the file and took the lock meanwhile, its lock stays.
 */
function removeOlderLock(lock: string): void {
  try {
    unlinkSync(lock);
  } catch (error) {
    if (!hasCode(error, ['ENOENT', 'EISDIR', 'EPERM'])) throw error;
  }
}

function hasCode(error: unknown, codes: string[]): boolean {
  return codes.includes((error as NodeJS.ErrnoException).code ?? '');
}
