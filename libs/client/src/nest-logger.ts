import { inspect, type InspectOptionsStylized } from 'node:util';
import { Logger } from '@nestjs/common';
import { type LogFields, silentLogger, type SundialLogger } from '@sundial/core';

/**
 * One Sundial line as a Nest logger takes it: an object whose own properties are `msg` and the fields,
 * and which prints as `run failed { key: 'a', id: '3p0' }`. Whatever the app's Nest logger is, the
 * fields are kept:
 * - nestjs-pino merges an object message into its line: `{ context: 'Sundial', msg, key, id, … }`
 *   (a message string with the fields as a second argument would lose them: pino reads the arguments
 *   after a message as printf values, and drops those the message has no placeholder for);
 * - Nest's ConsoleLogger prints an object that is not a plain one with `util.inspect`, which calls
 *   `[inspect.custom]` below: `LOG [Sundial] run failed { key: 'a', id: '3p0' }`, the message first as
 *   in every other line (a plain object would print as `Object(3) { msg: … }`); with `json: true` it is
 *   the line's `message` object.
 */
class SundialLine {
  readonly msg: string;

  constructor(message: string, fields: LogFields | undefined) {
    this.msg = message;
    if (fields) Object.assign(this, fields, { msg: message });
  }

  [inspect.custom](_depth: number, options: InspectOptionsStylized): string {
    const { msg, ...fields } = this;
    if (Object.keys(fields).length === 0) return msg;
    return `${msg} ${inspect(fields, { ...options, compact: true, breakLength: Infinity })}`;
  }
}

/**
 * The default `logger` of SundialModule, SundialWorkerModule and SundialTestingModule (docs/spec.md
 * §6.3): Sundial's lines go through Nest's `Logger` with context 'Sundial', so they reach whichever
 * logger the app gave Nest (`app.useLogger`, nestjs-pino, a test's `setLogger`) and Nest's level
 * filter applies. `info` is Nest's `log`. Sundial's `debug` lines (one a run: `run ok`, stale claims,
 * skipped slots) are dropped unless `debug: true`, as the console default drops them: Nest's own default
 * levels include debug, and a line a run would flood an app's console (and build its fields a run).
 */
export function nestSundialLogger(options: { context?: string; debug?: boolean } = {}): SundialLogger {
  const logger = new Logger(options.context ?? 'Sundial');
  return {
    error: (message, fields) => logger.error(new SundialLine(message, fields)),
    warn: (message, fields) => logger.warn(new SundialLine(message, fields)),
    info: (message, fields) => logger.log(new SundialLine(message, fields)),
    // silentLogger's own debug: logsDebug() knows it writes nothing, so no run builds a debug line
    debug: options.debug
      ? (message, fields) => logger.debug(new SundialLine(message, fields))
      : silentLogger.debug,
  };
}

/** The module's `logger` option, else Sundial's lines through Nest's `Logger`. */
export function loggerOf(options: { logger?: SundialLogger }): SundialLogger {
  return options.logger ?? nestSundialLogger();
}
