import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { HeaderObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { NOW_HEADER } from '@sundial/core';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Stamps `Sundial-Now` (NOW_HEADER, docs/spec.md §5.2) on every answer: Redis's now as the scheduler
 * estimates it (§4.4), in epoch ms, when the request came. Due times are on that clock: the operator UI
 * and the CLI read "now" from it, not from their host's clock (a `Date` header has whole seconds only).
 * Called first, so that the refusals of the edge (a foreign Host, a missing token) carry it too; Node's
 * parser refusals, written before any route, do not.
 */
export function stampServerNow(app: INestApplication, now: () => number): void {
  app.use((_request: IncomingMessage, response: ServerResponse, next: () => void) => {
    response.setHeader(NOW_HEADER, String(now()));
    next();
  });
}

const NOW_HEADER_DOC: HeaderObject = {
  description:
    "the scheduler's now (Redis's clock, which due times are on), epoch ms: a client's clock may be off",
  required: true,
  schema: { type: 'integer', example: 1765031224123 },
};

/** The document with `Sundial-Now` listed on every response of every operation. */
export function withNowHeader(document: OpenAPIObject): OpenAPIObject {
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations as Record<string, unknown>)) {
      const responses = (operation as { responses?: Record<string, { headers?: object }> }).responses;
      for (const response of Object.values(responses ?? {})) {
        response.headers = { ...response.headers, [NOW_HEADER]: NOW_HEADER_DOC };
      }
    }
  }
  return document;
}
