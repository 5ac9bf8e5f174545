import { isSundialError } from '@sundial/core';
import type { LoggerService } from '@nestjs/common';

/** LOG_LEVEL values, most severe first; Nest's `log` is written as `info`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'verbose'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

type Fields = Record<string, unknown>;

const BOOT_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/**
 * One JSON object per line on stdout: `{ time, level, msg, context?, ...fields }`.
 * Pass an object as the message to add fields, e.g. `logger.log({ msg: 'run ok', key, id, version })`,
 * which is how every timer line carries `key`, `id` and `version`.
 */
export class JsonLogger implements LoggerService {
  constructor(
    private readonly threshold: LogLevelName = 'info',
    private readonly write: (line: string) => void = (line) => process.stdout.write(line),
  ) {}

  fatal(message: unknown, ...params: unknown[]): void {
    this.emit('fatal', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.emit('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.emit('warn', message, params);
  }
  log(message: unknown, ...params: unknown[]): void {
    this.emit('info', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.emit('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.emit('verbose', message, params);
  }

  private emit(level: LogLevelName, message: unknown, params: unknown[]): void {
    const fields = nestParams(params);
    // Nest's start-up chatter (a line per module and route) is debug detail, not news.
    if (level === 'info' && BOOT_CONTEXTS.has(String(fields.context))) level = 'debug';
    if (LOG_LEVELS.indexOf(level) > LOG_LEVELS.indexOf(this.threshold)) return;
    const record: Fields = { time: new Date().toISOString(), level, ...toFields(message), ...fields };
    this.write(`${safeStringify(record)}\n`);
  }
}

export function parseLogLevel(text: string | undefined): LogLevelName {
  const level = (text ?? 'info').trim().toLowerCase();
  if (level === 'log') return 'info';
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevelName;
  throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got "${text}"`);
}

function toFields(message: unknown): Fields {
  if (message instanceof Error) {
    // A refusal (e.g. a start refused for its configuration) logs its reason and fix, not only its message.
    const { reason, field, fix } = isSundialError(message) ? message : {};
    return { msg: message.message, ...(reason && { reason, field, fix }), stack: message.stack };
  }
  if (message !== null && typeof message === 'object' && !Array.isArray(message)) {
    const { msg, message: text, ...rest } = message as Fields;
    return { msg: msg ?? text, ...rest };
  }
  return { msg: typeof message === 'string' ? message : safeStringify(message) };
}

/** Nest calls `log(msg, context)` and `error(msg, stack, context)`: a string context always comes last. */
function nestParams(params: unknown[]): Fields {
  const fields: Fields = {};
  const strings = params.filter((param): param is string => typeof param === 'string');
  const context = strings.length > 0 && !isStack(strings[strings.length - 1]) ? strings.pop() : undefined;
  if (context) fields.context = context;
  const stack = strings.find(isStack);
  if (stack) fields.stack = stack;
  for (const param of params) {
    if (param instanceof Error) fields.stack = param.stack;
    // `warn(message, { key, id, version })`, the shape libs/core's EngineLogger uses
    else if (param !== null && typeof param === 'object' && !Array.isArray(param))
      Object.assign(fields, param);
  }
  return fields;
}

function isStack(text: string): boolean {
  return /\n\s+at /.test(text);
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
