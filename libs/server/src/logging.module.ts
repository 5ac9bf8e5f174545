import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { type DynamicModule, type LoggerService, Module } from '@nestjs/common';
import { Logger, LoggerModule, type Params, PinoLogger } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import { sundialLogger } from './pino-logger';

/** Where the app's SundialLogger is provided (the same pino as Nest's own lines and the request logs). */
export const SUNDIAL_LOGGER = Symbol('SundialLogger');

/** Nest's start-up chatter (a line per module and route) is debug detail, not news. */
const BOOT_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** Probes and scrapes come every few seconds: their request lines would bury everything else. */
const QUIET_PATHS = /^\/(health|metrics)(\/|\?|$)/;

/** nestjs-pino's Nest logger, with the start-up chatter at debug. */
class NestLogger extends Logger {
  override log(message: unknown, ...params: unknown[]): void {
    if (BOOT_CONTEXTS.has(String(params.at(-1)))) this.debug(message, ...params);
    else super.log(message, ...params);
  }
}

/**
 * The nestjs-pino settings of an app over its pino: a line per request (pino-http: method, url, status,
 * time, and a request id from `x-request-id` or new; the Authorization header redacted by the pino,
 * bodies never logged). nestjs-pino keeps one pino-http per process: where two apps share a process
 * (tests), Nest's lines and request lines go through the first app's pino; the library's lines always
 * go through their own app's.
 */
function loggingParams(pino: Pino): Params {
  return {
    pinoHttp: {
      logger: pino,
      genReqId: (req: IncomingMessage) => headerValue(req.headers['x-request-id']) ?? randomUUID(),
      autoLogging: { ignore: (req: IncomingMessage) => QUIET_PATHS.test(req.url ?? '') },
      customLogLevel: (_req: IncomingMessage, res: ServerResponse, error?: Error) =>
        error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    },
  };
}

/** The Nest logger of an app over its pino, for `NestFactory.create(module, { logger })`: JSON from the first line. */
export function createNestLogger(pino: Pino): LoggerService {
  const params = loggingParams(pino);
  return new NestLogger(new PinoLogger(params), params);
}

/** Logging for both apps: request lines (loggingParams) and the library's SundialLogger (SUNDIAL_LOGGER). */
@Module({})
export class LoggingModule {
  static forRoot(pino: Pino): DynamicModule {
    return {
      module: LoggingModule,
      global: true,
      imports: [LoggerModule.forRoot(loggingParams(pino))],
      providers: [{ provide: SUNDIAL_LOGGER, useValue: sundialLogger(pino) }],
      exports: [SUNDIAL_LOGGER],
    };
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first && first.length <= 128 ? first : undefined;
}
