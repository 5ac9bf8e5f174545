import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { SundialLogger } from '@sundial/core';
import { createNestLogger, createPino, SUNDIAL_LOGGER } from '@sundial/server';
import { refuseBeforeBody } from './http-edge';
import { HttpErrorFilter } from './http-error.filter';
import { parseBodies } from './request-body';
import { serveOperatorUi } from './operator-ui';
import type { SchedulerServiceFactory } from './scheduler-service';
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
  const bodyLimit = config.maxPayloadBytes + ENVELOPE_BYTES;
  // The token and a declared Content-Length over the limit are refused before any body is read.
  refuseBeforeBody(app, { apiToken: config.apiToken, bodyLimit });
  parseBodies(app, bodyLimit);
  app.useGlobalFilters(new HttpErrorFilter(app.get<SundialLogger>(SUNDIAL_LOGGER)));
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Sundial')
      .setDescription('Distributed timers and crons on Redis: schedule, cancel, reschedule, inspect.')
      .addBearerAuth()
      .build(),
  );
  SwaggerModule.setup('docs', app, document);
  serveOperatorUi(app);
  return app;
}
