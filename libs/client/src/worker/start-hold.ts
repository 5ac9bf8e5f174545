export const START_HOLD = Symbol('sundial:start-hold');

/**
 * The worker module's start, as its fire processors see it: their connections' errors are counted, not
 * logged, until it ends (@sundial/redis ErrorThrottle.holdUntil), since the start's wait for Redis says
 * in one line that Redis is away. SundialWorker ends it when its start ends, failed or not, or at stop.
 */
export class StartHold {
  readonly settled: Promise<void>;
  private release: () => void = () => undefined;

  constructor() {
    this.settled = new Promise((resolve) => (this.release = resolve));
  }

  end(): void {
    this.release();
  }
}
