import type { JsonValue, SundialLogger, TimerContext, TimerHandler } from '@sundial/core';

/** Writes the payload as one structured log line: a handler to try the cluster with. */
export function createLogHandler(logger: SundialLogger): TimerHandler {
  return (payload: JsonValue, ctx: TimerContext) => {
    const { key, id, version, due } = ctx;
    logger.info('timer fired', { key, id, version, handler: ctx.timer.handler, due, payload });
  };
}
