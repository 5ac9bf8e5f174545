import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { releaseLock, takeLock } from '../../scripts/own-redis-lock';

/**
 * The `npm start` lock (scripts/own-redis-lock.ts) taken by several starts whose file-system calls
 * interleave, driven step by step: each start's take and release are generators with one call between
 * two steps, and a schedule says which start makes the next one. After every step at most one start
 * holds the lock, and it is the one whose entry the lock holds. The starts here are this process (its pid
 * alive), each with its own token; a stale lock is a dead pid's entry.
 */
describe('npm start lock: starts interleaved call by call', () => {
  let root: string;
  let lock: string;
  const dead = spawnSync(process.execPath, ['-e', '']).pid;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'sundial-lock-steps-'));
    lock = join(root, 'npm-start.lock');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** A fresh directory, with the lock a start of `stalePid` left (killed holding it) if given. */
  function fresh(stalePid?: number): void {
    for (const name of readdirSync(root)) rmSync(join(root, name), { recursive: true, force: true });
    if (stalePid === undefined) return;
    mkdirSync(lock);
    writeFileSync(join(lock, `${stalePid}.stale`), '');
  }

  /**
   * Plays `schedule` (one start's letter a step; A, B, C, …), then the starts left round-robin. A start
   * takes, holds the lock for one step, and releases; one that finds it held ends there.
   */
  function play(names: string, schedule: string): Start[] {
    const starts = [...names].map((name) => new Start(lock, `${process.pid}.${name}`));
    const order = [...schedule].map((name) => names.indexOf(name));
    for (let at = 0; starts.some((start) => !start.ended); at++) {
      const next = order[at] ?? at % starts.length;
      starts[next].step();
      const holders = starts.filter((start) => start.holding).map((start) => start.token);
      if (holders.length > 1)
        throw new Error(`${holders.join(' and ')} hold the lock at step ${at} of ${schedule}`);
      if (holders.length === 1) expect(readdirSync(lock)).toEqual(holders);
    }
    return starts;
  }

  it('three starts at a stale lock: the race of the former design (A and C both holding) cannot happen', () => {
    fresh(dead);
    // A and B both see the stale lock (rename refused, its entry a dead pid's); A removes it and takes the
    // lock; B's removal finds nothing; C's take is refused on A's entry and sees A alive; so does B's.
    const [a, b, c] = play('ABC', 'AAA' + 'BBB' + 'AA' + 'B' + 'CCC' + 'BB');
    expect([a.took, b.took, c.took]).toEqual([true, false, false]);
    expect([b.sawHolder, c.sawHolder]).toEqual([process.pid, process.pid]);
    expect(readdirSync(root)).toEqual([]);
  });

  it.each([
    ['a stale lock', dead],
    ['no lock', undefined],
  ])(
    '3 starts at %s, in 200 seeded random interleavings: one holder at a time, each ends',
    (_what, stale) => {
      const random = seeded(42);
      for (let run = 0; run < 200; run++) {
        fresh(stale);
        const schedule = Array.from({ length: 30 }, () => 'ABC'[Math.floor(random() * 3)]).join('');
        const starts = play('ABC', schedule);
        // the first take wins; the others take it after a release or see a holder, never the dead one
        expect(starts.some((start) => start.took)).toBe(true);
        for (const start of starts) expect([true, process.pid]).toContain(start.took || start.sawHolder);
        expect(readdirSync(root)).toEqual([]);
      }
    },
  );

  describe('a start killed at any step leaves no lock that stops the next', () => {
    const sleepers: ChildProcess[] = [];
    afterAll(() => sleepers.forEach((child) => child.kill('SIGKILL')));

    it.each([1, 2, 3, 4, 5, 6, 7])('killed after its step %d, at a stale lock', async (steps) => {
      fresh(dead);
      const sleeper = spawn('cat', [], { stdio: ['pipe', 'ignore', 'ignore'] });
      sleepers.push(sleeper);
      const killed = new Start(lock, `${sleeper.pid}.K`);
      for (let step = 0; step < steps && !killed.ended; step++) killed.step();
      sleeper.kill('SIGKILL');
      await new Promise((exited) => sleeper.once('exit', exited));
      // A and B race for what it left: one takes it, the other sees it held or takes it after
      const [a, b] = play('AB', 'ABABABABAB');
      expect(a.took || b.took).toBe(true);
      // what a start killed before its take leaves (its own directory) the next take removes
      expect(readdirSync(root)).toEqual([]);
    });
  });

  it('a lock file an older npm start left: taken over when its pid is gone, by one of two starts', () => {
    fresh();
    writeFileSync(lock, `${dead}\n`);
    // one holder at a time (play checks it at every step): A takes it; B after A's release, or sees A
    const [a, b] = play('AB', 'ABABABAB');
    expect(a.took).toBe(true);
    expect([true, process.pid]).toContain(b.took || b.sawHolder);
    expect(readdirSync(root)).toEqual([]);
  });

  it('a lock file of a live older npm start: its pid is named, the file left', () => {
    fresh();
    writeFileSync(lock, `${process.pid}\n`);
    const [a] = play('A', '');
    expect([a.took, a.sawHolder]).toEqual([false, process.pid]);
    expect(readFileSync(lock, 'utf8')).toBe(`${process.pid}\n`);
  });
});

/** One start: its take, one step of holding, its release. */
class Start {
  took = false;
  holding = false;
  sawHolder: number | undefined;
  ended = false;
  private readonly taking: Generator<void, number | undefined>;
  private releasing: Generator<void, void> | undefined;

  constructor(
    private readonly lock: string,
    readonly token: string,
  ) {
    this.taking = takeLock(lock, token);
  }

  step(): void {
    if (this.ended) return;
    if (this.releasing) {
      this.ended = this.releasing.next().done === true;
    } else if (this.holding) {
      this.holding = false; // its first release step removes its entry: it holds the lock no more
      this.releasing = releaseLock(this.lock, this.token);
      this.step();
    } else {
      const step = this.taking.next();
      if (!step.done) return;
      this.sawHolder = step.value;
      this.took = this.holding = step.value === undefined;
      this.ended = !this.took;
    }
  }
}

/** A deterministic random sequence (mulberry32): the same interleavings at every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
