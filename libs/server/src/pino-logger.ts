import { type LogFields, refusals, type SundialLogger } from '@sundial/core';
import { type DestinationStream, type Logger, pino } from 'pino';

/** LOG_LEVEL values, most severe first (pino's levels); Nest's `log` and `verbose` are read as `info`, `trace`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

const ALIASES: Record<string, LogLevelName> = { log: 'info', verbose: 'trace' };

/**
 * What no log line may carry: the API token, cookies (request logs show headers). Request bodies are
 * never logged (pino-http's request serializer leaves them out), so a timer's `payload` and `meta` are not.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
];

export function parseLogLevel(text: string | undefined): LogLevelName {
  // Blank is unset, as for every variable (env.ts): a `LOG_LEVEL=` line in a ConfigMap or .env file.
  const level = (text?.trim() || 'info').toLowerCase();
  const named = ALIASES[level] ?? level;
  if ((LOG_LEVELS as readonly string[]).includes(named)) return named as LogLevelName;
  throw refusals.invalid(
    'LOG_LEVEL',
    `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got "${text}"`,
    'Write LOG_LEVEL as one of those (or log, verbose as Nest names info, trace), or leave it out for info.',
  );
}

/**
 * The apps' logger (docs/spec.md §6.3): one JSON object per line on stdout, `{ level, time, pid,
 * hostname, msg, ...fields }` with the level as its name and the time as ISO 8601. Writes are
 * synchronous, so a line logged just before the process exits is not lost.
 */
export function createPino(level: LogLevelName, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: { err: errSaidOnce },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/**
 * pino's `err` serializer, whose `message` is the error's followed by each `cause`'s (`a: b: c`), except a
 * cause whose message the line says already: a start that waited for Redis in vain says `Redis did not
 * answer within 30000 ms at start: connect ECONNREFUSED …` with that connection error as its cause, and a
 * bad REDIS_URL its parser's message; pino's own printed it twice.
 */
export function errSaidOnce(error: Error): ReturnType<typeof pino.stdSerializers.err> {
  const serialized = pino.stdSerializers.err(error);
  if (!(error instanceof Error) || !('cause' in error)) return serialized;
  let message = error.message;
  const seen = new Set<unknown>([error]);
  for (let cause = error.cause; cause instanceof Error && !seen.has(cause); cause = cause.cause) {
    seen.add(cause);
    if (!message.includes(cause.message)) message += `: ${cause.message}`;
  }
  serialized.message = message;
  return serialized;
}

/** The library's logger interface over pino: a message and its fields become one line. */
export function sundialLogger(logger: Logger): SundialLogger {
  const at =
    (level: 'error' | 'warn' | 'info' | 'debug') =>
    (message: string, fields?: LogFields): void =>
      logger[level](fields ?? {}, message);
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}
