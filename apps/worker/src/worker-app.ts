import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SundialWorker } from '@sundial/client';
import { createNestLogger, createPino, guardHttpEdge, sundialLogger } from '@sundial/server';
import type { HandlerMap } from './handlers-module';
import { createHttpHandler } from './handlers/http.handler';
import { createLogHandler } from './handlers/log.handler';
import type { WorkerConfig } from './worker-config';
import { WorkerModule } from './worker.module';

/**
 * Builds the worker application, not yet listening; its port (/health, /metrics) answers as the
 * scheduler's does (`guardHttpEdge`). Handlers: the built-ins (`http`, `log`), then `extra`: those of
 * SUNDIAL_HANDLERS_MODULE (main.ts loads it before the app, with the environment), or a test's; a later
 * one wins on a shared name.
 */
export async function createWorkerApp(
  config: WorkerConfig,
  extra: HandlerMap = {},
): Promise<INestApplication> {
  const pino = createPino(config.logLevel);
  const handlers: HandlerMap = {
    http: createHttpHandler(config.httpAllow),
    log: createLogHandler(sundialLogger(pino)),
    ...extra,
  };
  const app = await NestFactory.create<NestExpressApplication>(WorkerModule.forRoot(config, pino, handlers), {
    logger: createNestLogger(pino),
  });
  // The stack is nobody's business.
  app.disable('x-powered-by');
  // As the scheduler's port: its estimate of Redis's now (`Sundial-Now`) and the security headers on
  // every answer, a foreign Host refused.
  const worker = app.get(SundialWorker);
  guardHttpEdge(app, { allowedHosts: config.allowedHosts, app: 'worker', now: () => worker.redisNow() });
  return app;
}
