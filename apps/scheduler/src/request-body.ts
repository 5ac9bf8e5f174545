import type { NestExpressApplication } from '@nestjs/platform-express';
import { refusals } from '@sundial/core';
import type { IncomingMessage } from 'node:http';
import { unkeptJson } from './json-body-checks';

/** The bytes of each request whose body held at least one (seen by the JSON parser's `verify`). */
const bodies = new WeakMap<IncomingMessage, { bytes: Buffer; charset: string }>();

/**
 * Reads every body as JSON, whatever its Content-Type. Not strict: a body that is JSON but not an
 * object (`null`, `42`) reaches the checks, which say so, rather than called "not valid JSON". A
 * request without a body (none declared, or zero bytes: the parser would make that `{}`) gets
 * `undefined`, for `requiredBody` to refuse as such.
 */
export function parseBodies(app: NestExpressApplication, limit: number): void {
  app.use(readUtf8Labels);
  app.useBodyParser('json', {
    limit,
    type: () => true,
    strict: false,
    verify: (request: IncomingMessage, _response: unknown, bytes: Buffer, charset: string) => {
      if (bytes.length > 0) bodies.set(request, { bytes, charset });
    },
  });
  app.use(
    (request: IncomingMessage & { body?: unknown }, _response: unknown, next: (error?: unknown) => void) => {
      const sent = bodies.get(request);
      if (!sent) request.body = undefined;
      next(sent && checkText(sent.bytes, sent.charset));
    },
  );
}

/** The charset parameter of a Content-Type: its value, unquoted. */
const CHARSET = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i;

/**
 * A charset label that names UTF-8 under another spelling (`utf8`, `unicode-1-1-utf-8`: the WHATWG
 * labels, which browsers and many clients send) is read as UTF-8: the parser knows only `utf-8`, and
 * would refuse a UTF-8 body 415 telling the caller to send UTF-8.
 */
function readUtf8Labels(request: IncomingMessage, _response: unknown, next: () => void): void {
  const type = request.headers['content-type'];
  const label = type === undefined ? undefined : CHARSET.exec(type)?.[2];
  if (label !== undefined && label.toLowerCase() !== 'utf-8' && namesUtf8(label)) {
    request.headers['content-type'] = type!.replace(CHARSET, '; charset=utf-8');
  }
  next();
}

function namesUtf8(label: string): boolean {
  try {
    return new TextDecoder(label).encoding === 'utf-8';
  } catch {
    return false;
  }
}

/**
 * What the body says that its parsed JSON would not keep (json-body-checks.ts), read from its bytes as
 * the JSON parser decoded them. A charset the platform's decoder does not name (UTF-32, which the
 * parser takes) is left unchecked rather than misread.
 */
function checkText(bytes: Buffer, charset: string): unknown {
  let text: string;
  try {
    text = new TextDecoder(charset, { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  return unkeptJson(text);
}

/**
 * What each route with a body takes: the fix of a request without one names them all, and /docs shows
 * the first as the route's example body, which Swagger UI's "Try it out" sends as it is (without one it
 * makes up a body of every field, which the API refuses).
 */
export const BODY_EXAMPLES = {
  spec: [{ key: 'invoice:42', handler: 'log', delay: '5s' }],
  putSpec: [{ handler: 'log', delay: '5s' }],
  when: [{ delay: '10m' }, { at: '2026-03-01T09:00:00Z' }],
  range: [{ from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' }],
} as const satisfies Record<string, readonly object[]>;

/** Examples as a fix writes them: `{"delay":"10m"} or {"at":…}`. */
export function examplesText(examples: readonly object[]): string {
  return examples.map((example) => JSON.stringify(example)).join(' or ');
}

/**
 * The parsed body of a route that needs one. A request without a body reaches the route as
 * `undefined` (parseBodies), which the TimersApi's checks would call "got undefined" (or, for zero
 * bytes parsed as `{}`, a missing key): refused here, saying there was no body (docs/spec.md §5.2).
 */
export function requiredBody(body: unknown, route: string, examples: readonly object[]): unknown {
  if (body !== undefined) return body;
  throw refusals.invalid(
    'body',
    `${route} takes a JSON body, and the request had no body`,
    `Send a JSON body (any Content-Type is read as JSON), e.g. ${examplesText(examples)}.`,
  );
}
