/** Where the engine reports what it cannot throw: a `keep` that ignored a new time, a listener that threw. */
export interface EngineLogger {
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The default: one JSON line per message on stderr, with the timer's key, id and version as fields. */
export const jsonConsoleLogger: EngineLogger = {
  warn: (message, fields) => console.warn(JSON.stringify({ level: 'warn', message, ...fields })),
  error: (message, fields) => console.error(JSON.stringify({ level: 'error', message, ...fields })),
};
