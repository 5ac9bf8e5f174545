import { refusals } from '@sundial/core';

/**
 * A start (`TimerRunner.start()`, `Dispatcher.start()`, `RedisTimers.connect()`) that its owner's close
 * (`close()`, `dispose()`) overtook: rejects `Closed while starting` (reason `disposed`), also when the
 * close came after it had waited for Redis — in its store checks, its clock's measure, its consumers'
 * start. What then failed on the connections the close shut (`Connection is closed.`) is the close's
 * doing: it answered that error bare, or as `unavailable` "Redis is unreachable", Redis fine all along,
 * and a start the close overtook in its last step resolved as started. (A start still waiting for Redis
 * or its subscription says so itself: wait-for-redis.ts, subscription.ts.)
 */
export async function startUnlessClosed(closed: () => boolean, start: () => Promise<void>): Promise<void> {
  try {
    await start();
  } catch (error) {
    throw closed() ? refusals.closedWhileStarting() : error;
  }
  if (closed()) throw refusals.closedWhileStarting();
}
