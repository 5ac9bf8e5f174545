import { Controller, Get, Module, Param } from '@nestjs/common';
import { APP_FILTER, HttpAdapterHost } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { SundialError, type SundialErrorReason } from '@sundial/core';
import { SundialErrorFilter } from './sundial-error.filter';

@Controller('refuse')
class RefusingController {
  @Get(':reason')
  refuse(@Param('reason') reason: SundialErrorReason): never {
    throw new SundialError({ reason, field: 'key', message: `refused: ${reason}`, fix: 'do otherwise' });
  }
}

/**
 * An app whose route throws the refusal its path names, on Express or Fastify, the filter registered as
 * `register` says: a provider, `new SundialErrorFilter(app.get(HttpAdapterHost))`, or made without it.
 */
async function serve(platform: 'express' | 'fastify', register: 'provider' | 'new' | 'new without adapter') {
  @Module({
    controllers: [RefusingController],
    providers: register === 'provider' ? [{ provide: APP_FILTER, useClass: SundialErrorFilter }] : [],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app =
    platform === 'fastify'
      ? moduleRef.createNestApplication(new FastifyAdapter(), { logger: false })
      : moduleRef.createNestApplication({ logger: false });
  if (register === 'new') app.useGlobalFilters(new SundialErrorFilter(app.get(HttpAdapterHost)));
  if (register === 'new without adapter') app.useGlobalFilters(new SundialErrorFilter());
  await app.listen(0, '127.0.0.1');
  const base = await app.getUrl();
  return { app, get: (reason: string) => fetch(`${base}/refuse/${reason}`) };
}

describe('SundialErrorFilter', () => {
  // The status of every refusal of docs/spec.md §2, as apps/scheduler answers them.
  const statuses = [
    ['invalid', 400],
    ['payload-too-large', 413],
    ['duplicate-key', 409],
    ['not-found', 404],
    ['inactive', 409],
    ['unauthorized', 401],
    ['disposed', 503],
    ['unavailable', 503],
    ['idempotency-conflict', 422],
    // a run-failure reason is never a refusal: thrown anyway, a 500 with the same body
    ['lost', 500],
  ] as const;

  const registrations = (['express', 'fastify'] as const).flatMap((platform) =>
    (['provider', 'new', 'new without adapter'] as const).map((register) => [platform, register] as const),
  );

  it.each(registrations)(
    'answers each refusal with its status and { error } over real HTTP (%s, registered as %s)',
    async (platform, register) => {
      const { app, get } = await serve(platform, register);
      try {
        for (const [reason, status] of statuses) {
          const response = await get(reason);
          expect([reason, response.status]).toEqual([reason, status]);
          expect(response.headers.get('content-type')).toMatch(/^application\/json/);
          expect(await response.json()).toEqual({
            error: { reason, field: 'key', message: `refused: ${reason}`, fix: 'do otherwise' },
          });
        }
      } finally {
        await app.close();
      }
    },
  );
});
