import { type Clock, realClock } from '@sundial/core';

/**
 * Why this exists: a BullMQ Queue or Worker emits `error` at each reconnect attempt of its connection
 * (every 50 ms rising to 2 s, connection.ts) for as long as Redis is away. Logged as they came, that was
 * ~16 lines in the scheduler's first 6 s of an outage and 35 per queue in a 30 s boot wait of a Nest app:
 * the noise hid what an operator needs, which is that it fails, why, that it goes on, and when it stops.
 * So a listener logs the first error of a run of them, then at most one line an interval saying how many
 * it left out (counted at the next error: no timer of its own to leak past a close), and one line when
 * the connection is ready again (docs/spec.md §5.5).
 */
export const errorLogInterval = {
  /** at most one `still failing` line this often; tests shorten it */
  ms: 30_000,
};

/** Where the lines go: errors while it fails, the recovery as info. */
export interface ErrorLog {
  error(message: string): void;
  info(message: string): void;
}

/** A BullMQ Queue or Worker: its backend's `client` is its (non-blocking) ioredis connection, once ready. */
export interface ErrorSource {
  on(event: 'error', listener: (error: Error) => void): unknown;
  getBackend(): {
    readonly client: Promise<{ status: string; on(event: 'ready', listener: () => void): unknown }>;
  };
}

/** One listener's errors, `what` naming whose (`Sundial dispatcher queue`), logged as above. */
export class ErrorThrottle {
  private failing = false;
  /** errors since the last line that were not logged */
  private unlogged = 0;
  private loggedAt = 0;
  private lastErrorAt = 0;
  private watching = false;
  /** during a start's wait for Redis (holdUntil): errors only counted */
  private held = false;

  constructor(
    private readonly what: string,
    private readonly log: ErrorLog,
    private readonly clock: Pick<Clock, 'now'> = realClock,
  ) {}

  error(error: Error): void {
    const now = this.clock.now();
    // A whole interval without errors (reconnect attempts come at most 2 s apart) also ends a run: an
    // error of another kind (a Worker's own, with no reconnect) is then logged as one, not as `still failing`.
    const quietSince = this.failing && now - this.lastErrorAt >= errorLogInterval.ms;
    this.lastErrorAt = now;
    if (this.held && !this.failing) {
      this.unlogged++;
      return;
    }
    if (!this.failing || quietSince) {
      const left = this.unlogged > 0 ? ` (${this.unlogged} earlier errors not logged)` : '';
      this.failing = true;
      this.unlogged = 0;
      this.loggedAt = now;
      this.log.error(`${this.what}: ${error.message}${left}`);
      return;
    }
    this.unlogged++;
    if (now - this.loggedAt < errorLogInterval.ms) return;
    this.log.error(
      `${this.what}: still failing, ${this.unlogged} errors not logged in ${now - this.loggedAt} ms; the last: ${error.message}`,
    );
    this.unlogged = 0;
    this.loggedAt = now;
  }

  /** The connection answers again (or, `said`, what else ends the run): says so if errors were logged since. */
  recovered(said = 'connected again'): void {
    if (!this.failing) {
      this.unlogged = 0; // errors of a held start, answered again: the wait's own lines said it all
      return;
    }
    this.failing = false;
    const left = this.unlogged > 0 ? ` (${this.unlogged} errors not logged since the last line)` : '';
    this.unlogged = 0;
    this.log.info(`${this.what}: ${said}${left}`);
  }

  /**
   * Until `settled` settles (the start of the owner, which waits for Redis saying so in one line:
   * wait-for-redis.ts), errors are only counted: a Nest app booting while Redis was away logged three
   * errors (its queues' and its worker's) before that one warn, for one expected wait. Recovered
   * meanwhile, they are forgotten; still failing after it, the first error after it is logged with
   * their count, so a connection that stays broken is said as before.
   */
  holdUntil(settled: Promise<unknown>): this {
    this.held = true;
    const release = (): void => {
      this.held = false;
    };
    settled.then(release, release);
    return this;
  }

  /**
   * Recovers at each `ready` of `source`'s connection; once per source. Watched from the `start` (before
   * its connection was ever ready), its first one too: the client resolves once ready. Watched from a
   * first `error` (a @nestjs/bullmq Worker's, in its listener), the client resolves at once and only a
   * later `ready` is a recovery: one lost is not ready yet, and one still ready (the error was not a
   * reconnect: a Worker's own) was never lost — `connected again` there would be false.
   */
  recoversWith(source: Pick<ErrorSource, 'getBackend'>, since: 'start' | 'error' = 'start'): this {
    if (this.watching) return this;
    this.watching = true;
    source.getBackend().client.then(
      (client) => {
        if (since === 'start' && client.status === 'ready') this.recovered();
        client.on('ready', () => this.recovered());
      },
      () => undefined, // closed before it was ever ready: nothing to recover
    );
    return this;
  }
}

/** Routes `source`'s errors through a new ErrorThrottle that recovers with its connection. */
export function throttleErrors(
  source: ErrorSource,
  what: string,
  log: ErrorLog,
  clock?: Pick<Clock, 'now'>,
): ErrorThrottle {
  const throttle = new ErrorThrottle(what, log, clock).recoversWith(source);
  source.on('error', (error) => throttle.error(error));
  return throttle;
}
