import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireBuildLock } from './build';

/**
 * ensureBuilt's lock (dist/.build-lock): one left by a killed run (Ctrl-C of jest) blocked every suite
 * for 5 minutes before it was taken over. Its owner's pid, written in it, tells at once whether it is.
 */
describe('the build lock', () => {
  let dir: string;
  let lock: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'build-lock-'));
    lock = join(dir, '.build-lock');
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Whether acquiring settles within `ms`. */
  async function settlesWithin(acquiring: Promise<void>, ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([acquiring.then(() => true), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  function lockedBy(pid: number | undefined): void {
    mkdirSync(lock);
    if (pid !== undefined) writeFileSync(join(lock, 'pid'), String(pid));
  }

  it('is taken with this process pid in it', async () => {
    await acquireBuildLock(lock);
    expect(readFileSync(join(lock, 'pid'), 'utf8')).toBe(String(process.pid));
  });

  it('left by a process that is gone, is taken over at once', async () => {
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    lockedBy(gone);
    // deadline: the first retry comes 200 ms after the first look, on a loaded host (the fallback is 5 min)
    expect(await settlesWithin(acquireBuildLock(lock), 2000)).toBe(true);
    expect(readFileSync(join(lock, 'pid'), 'utf8')).toBe(String(process.pid));
  });

  it('held by a live process, is waited for until it is released', async () => {
    // Alive until killed in the finally, or until this process goes (its stdin, our pipe, then ends).
    const owner = spawn(process.execPath, ['-e', 'process.stdin.resume()']);
    try {
      lockedBy(owner.pid);
      const acquiring = acquireBuildLock(lock);
      expect(await settlesWithin(acquiring, 600)).toBe(false);
      rmSync(lock, { recursive: true });
      // deadline: the next retry (every 200 ms), on a loaded host
      expect(await settlesWithin(acquiring, 2000)).toBe(true);
    } finally {
      owner.kill();
    }
  });

  it('without a pid, is taken over once 5 minutes old, not before', async () => {
    lockedBy(undefined);
    const acquiring = acquireBuildLock(lock);
    expect(await settlesWithin(acquiring, 600)).toBe(false);
    const old = (Date.now() - 5 * 60_000 - 1000) / 1000;
    utimesSync(lock, old, old);
    // deadline: the next retry (every 200 ms), on a loaded host
    expect(await settlesWithin(acquiring, 2000)).toBe(true);
  });
});
