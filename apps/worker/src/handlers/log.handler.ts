import type { LoggerService } from '@nestjs/common';
import type { JsonValue, TimerContext, TimerHandler } from '@sundial/core';

/** Writes the payload as one structured log line: a handler to try the cluster with. */
export function createLogHandler(logger: LoggerService): TimerHandler {
  return (payload: JsonValue, ctx: TimerContext) => {
    logger.log(
      { msg: 'timer fired', key: ctx.key, id: ctx.id, version: ctx.version, due: ctx.due, payload },
      'log',
    );
  };
}
