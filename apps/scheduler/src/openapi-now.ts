import type { OpenAPIObject } from '@nestjs/swagger';
import type { HeaderObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { NOW_HEADER } from '@sundial/core';

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
