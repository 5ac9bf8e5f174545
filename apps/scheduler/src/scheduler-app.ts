import { NestFactory, Reflector } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { SundialLogger } from '@sundial/core';
import {
  APP_SERVICE,
  createNestLogger,
  createPino,
  guardHttpEdge,
  nameServerSpans,
  SUNDIAL_LOGGER,
} from '@sundial/server';
import { ApiTokenGuard } from './api-token';
import { refuseBeforeBody } from './http-edge';
import { HttpErrorFilter } from './http-error.filter';
import { withReplayedHeader } from './idempotency-key';
import { documentProbes } from './openapi-probes';
import { withComponents } from './openapi-responses';
import { RouteInputGuard } from './route-input';
import { allowedMethods, answerRouteEdges, withPages } from './route-methods';
import { parseBodies } from './request-body';
import { serveOperatorUi } from './operator-ui';
import { withNowHeader } from './openapi-now';
import type { SchedulerService, SchedulerServiceFactory } from './scheduler-service';
import type { SchedulerConfig } from './scheduler-config';
import { SchedulerModule } from './scheduler.module';

/** Room for the spec around the payload (key, handler, schedule, meta) in a request body. */
const ENVELOPE_BYTES = 16 * 1024;

/** Builds the scheduler application, configured but not listening (main.ts and tests call listen). */
export async function createSchedulerApp(
  config: SchedulerConfig,
  service: SchedulerServiceFactory,
): Promise<NestExpressApplication> {
  const pino = createPino(config.logLevel);
  const app = await NestFactory.create<NestExpressApplication>(
    SchedulerModule.forRoot(config, pino, service),
    {
      logger: createNestLogger(pino),
      bodyParser: false,
    },
  );
  // The stack is nobody's business.
  app.disable('x-powered-by');
  // The routes as the controllers declare them: the OpenAPI document, and the methods of each path.
  // Built at its first use (/docs, an OPTIONS, a 404 or 405), not at start: ~35 ms of CPU a start that
  // most starts never need; the same document (it reads only the controllers' metadata, fixed by now).
  documentProbes();
  const document = once(() =>
    withNowHeader(
      withReplayedHeader(
        withComponents(
          SwaggerModule.createDocument(
            app,
            new DocumentBuilder()
              .setTitle('Sundial')
              .setDescription('Distributed timers and crons on Redis: schedule, cancel, reschedule, inspect.')
              .addBearerAuth()
              .build(),
          ),
        ),
      ),
    ),
  );
  const allowed = withPages(allowedMethods(document));
  const bodyLimit = config.maxPayloadBytes + ENVELOPE_BYTES;
  // With tracing on, each request's span named by its route (`POST /v1/timers/:key/trigger`).
  nameServerSpans(app);
  // Every answer says the scheduler's now (Redis's clock) and has the security headers, refusals
  // included; a foreign Host refused first.
  const running = app.get<SchedulerService>(APP_SERVICE);
  const now = (): number => running.now?.() ?? Date.now();
  guardHttpEdge(app, { allowedHosts: config.allowedHosts, app: 'scheduler', now });
  // The token and a declared Content-Length over the limit are refused before any body is read.
  refuseBeforeBody(app, { apiToken: config.apiToken, bodyLimit });
  answerRouteEdges(app, allowed);
  parseBodies(app, bodyLimit);
  app.useGlobalFilters(new HttpErrorFilter(app.get<SundialLogger>(SUNDIAL_LOGGER), allowed));
  // On the route matched: the API token (again: the edge goes by the URL), then input the route does
  // not take (a query parameter, one given twice, a body) refused before the route runs.
  app.useGlobalGuards(new ApiTokenGuard(config.apiToken), new RouteInputGuard(app.get(Reflector)));
  SwaggerModule.setup('docs', app, document);
  serveOperatorUi(app);
  return app;
}

/** `make`'s value, computed at the first call. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
