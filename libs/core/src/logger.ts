/**
 * Structured fields of a log line. A line about a timer carries `key`, `id` and `version` (and, where the
 * writer knows them, `partition` and `handler`), so a log search by key finds its whole story.
 */
export type LogFields = Record<string, unknown>;

/**
 * The one logger type of every Sundial class and app (docs/spec.md §6.3): a message and structured
 * fields. The apps hand the library a pino logger behind this interface; a user's app may pass its own.
 */
export interface SundialLogger {
  error(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
}

type Level = keyof SundialLogger;

function jsonLine(
  level: Level,
  write: (line: string) => void,
): (message: string, fields?: LogFields) => void {
  return (message, fields) =>
    write(JSON.stringify({ level, time: new Date().toISOString(), msg: message, ...fields }));
}

/** The `debug` of the built-in loggers: writes nothing. */
const dropped = (): void => undefined;

/**
 * Whether `logger.debug` may write: false for the built-in loggers, whose debug writes nothing, so a
 * caller on a hot path (a line per run) need not build the fields of a line nobody reads.
 */
export function logsDebug(logger: SundialLogger): boolean {
  return logger.debug !== dropped;
}

/**
 * The default when no logger is given: one JSON object per line, `error` and `warn` on stderr, `info` on
 * stdout; `debug` is dropped (give a logger to see it).
 */
export const consoleLogger: SundialLogger = {
  error: jsonLine('error', (line) => console.error(line)),
  warn: jsonLine('warn', (line) => console.warn(line)),
  info: jsonLine('info', (line) => console.log(line)),
  debug: dropped,
};

/** Writes nothing: for tests and for apps that report through events and metrics only. */
export const silentLogger: SundialLogger = {
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: dropped,
};
