import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import { Catch, HttpException, NotFoundException } from '@nestjs/common';
import type { SundialErrorReason, SundialLogger } from '@sundial/core';
import { isSundialError, keyNotFoundFix, SUNDIAL_HTTP_STATUS } from '@sundial/core';
import { idempotencyConflict } from './idempotency-key';
import type { AllowedMethods } from './route-methods';

export const BODY_TOO_LARGE_FIX =
  'Keep the payload under SUNDIAL_MAX_PAYLOAD_BYTES; store large data elsewhere and pass a reference. A batch of specs is held to one body: split it into smaller batches.';

/**
 * A not-found key's fix over HTTP (@sundial/core key-fix.ts): its routes, the key URL-encoded as in the
 * path (the TimersApi's own names `list({ prefix })`, its call).
 */
export function httpKeyNotFoundFix(key: string | undefined, code?: unknown, status?: unknown): string {
  return keyNotFoundFix(
    key,
    {
      list: (scope) => `GET /v1/timers${scope === '' ? '' : `?prefix=${encodeURIComponent(scope)}`}`,
      history: (key) => `GET /v1/timers/${key === undefined ? ':key' : encodeURIComponent(key)}/history`,
      kept: '"removeOnComplete": false',
      create: 'POST /v1/timers with its spec',
    },
    code,
    status,
  );
}

/**
 * A write cut off after it was sent (`outcome-unknown`) over HTTP: the TimersApi's fix names its
 * requestId option; a client of the API sends the header.
 */
export const HTTP_OUTCOME_UNKNOWN_FIX =
  'Retry with the same requestId (over HTTP, the same Idempotency-Key header): a repeated request returns ' +
  'the first result and changes nothing more. Without one, check the timer with get(key) once Redis answers again (it may still run a write it had not run yet), before retrying.';

/** A refused `cursor` of GET /v1/timers (@sundial/core list-cursor.ts), in terms of its pages and query. */
function httpCursorRefusal(error: { detail?: { code?: string } }): { message: string; fix: string } {
  if (error.detail?.code === 'cursor-other-list') {
    return {
      message:
        'The cursor is the nextCursor of a GET /v1/timers page of another prefix, status or dueBefore.',
      fix: 'Send the cursor with the prefix, status and dueBefore of the page that returned it, or leave cursor out to start over.',
    };
  }
  return {
    message: 'The cursor is not the nextCursor of a GET /v1/timers page.',
    fix: 'Pass the nextCursor of the previous GET /v1/timers page, or leave cursor out to start over.',
  };
}

const PATH_ENCODING_FIX =
  'URL-encode the key in the path (encodeURIComponent): a key is letters, digits and : _ - . / @, a "/" in it as %2F.';

/** Refusals raised by the HTTP stack itself (body parser, router), in the same vocabulary. */
const REASON_BY_STATUS: Record<number, { reason: SundialErrorReason; fix: string }> = {
  400: { reason: 'invalid', fix: 'Send a JSON body (Content-Type: application/json) and URL-encoded keys.' },
  404: { reason: 'not-found', fix: 'See GET /docs for the routes this API offers.' },
  413: { reason: 'payload-too-large', fix: BODY_TOO_LARGE_FIX },
  // body-parser refuses a charset it cannot decode (`application/json; charset=latin1`)
  415: {
    reason: 'invalid',
    fix: 'Send the body as UTF-8 JSON: Content-Type application/json, with no charset or charset=utf-8.',
  },
};

/** The parts of Express's request and response this filter uses. */
interface JsonResponse {
  status(code: number): { json(body: unknown): void };
  setHeader(name: string, value: string): void;
}
interface HeadersRequest {
  method: string;
  url: string;
  /** the route's parameters (`key` of /v1/timers/:key/…), once routed */
  params?: Record<string, string | undefined>;
  headers: Record<string, string | string[] | undefined>;
}

interface ErrorBody {
  reason: string;
  field?: string;
  message: string;
  fix: string;
}

/** Every error answers `{ error: { reason, field?, message, fix } }` with its status of docs/spec.md §2. */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(
    private readonly logger: SundialLogger,
    private readonly allowed: AllowedMethods = () => undefined,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const [request, response] = [http.getRequest<HeadersRequest>(), http.getResponse<JsonResponse>()];
    // The router's 404 for a path a route has, with another method: 405 with the methods it takes.
    const path = request.url.split('?')[0];
    const methods = exception instanceof NotFoundException ? this.allowed(path) : undefined;
    if (methods) {
      response.setHeader('allow', methods.join(', '));
      const takes = methods.filter((method) => method !== 'HEAD' && method !== 'OPTIONS').join(', ');
      const error = {
        reason: 'invalid',
        message: `${request.method} is not a method of ${path}, which takes ${takes}`,
        fix: `Use ${takes} (GET /docs lists each route).`,
      };
      return void response.status(405).json({ error });
    }
    const [status, body] = this.describe(exception, request);
    response.status(status).json(body);
  }

  /** The status and the JSON body that answer `exception`. */
  private describe(exception: unknown, request: HeadersRequest): [number, { error: ErrorBody } | object] {
    if (isSundialError(exception)) {
      const error = exception.toJSON();
      // not-found from the TimersApi (reschedule, pause, resume, trigger, backfill, history, …): the
      // in-process fix names list(); over HTTP the way to the live keys is the route.
      if (error.reason === 'not-found' && error.field === 'key') {
        error.fix = httpKeyNotFoundFix(request.params?.key, error.detail?.code, error.detail?.status);
      }
      // backfill on a one-shot: the in-process fix names trigger(key); over HTTP it is the trigger route.
      if (error.detail?.code === 'one-shot') {
        const trigger = request.url.split('?')[0].replace(/\/backfill$/, '/trigger');
        error.fix = `Backfill an every or cron timer, or POST ${trigger} to run a one-shot timer now.`;
      }
      if (error.detail?.code === 'outcome-unknown') error.fix = HTTP_OUTCOME_UNKNOWN_FIX;
      // a list cursor: the TimersApi names its list() call; the HTTP caller had it from a GET page
      if (error.reason === 'invalid' && error.field === 'cursor')
        Object.assign(error, httpCursorRefusal(error));
      // The TimersApi names its requestId (for PUT, one derived from the header): the caller sent a header.
      if (error.reason === 'idempotency-conflict') {
        Object.assign(error, idempotencyConflict(request.headers['idempotency-key']));
      }
      return [SUNDIAL_HTTP_STATUS[exception.reason] ?? 400, { error }];
    }
    const status = httpStatusOf(exception);
    const message = tooLargeMessage(exception) ?? (exception as Error).message;
    if (status !== undefined && status < 500) {
      const encoding = encodingRefusal(exception, status, message, request.headers['content-encoding']);
      if (encoding) return [status, { error: encoding }];
      const { reason, fix } = REASON_BY_STATUS[status] ?? { reason: 'invalid', fix: 'See GET /docs.' };
      // the router's refusal of a path segment that is not percent-encoding (`/v1/timers/%E0%A4%A`)
      const badPath = status === 400 && message.startsWith('Failed to decode param');
      return [status, { error: { reason, message, fix: badPath ? PATH_ENCODING_FIX : fix } }];
    }
    // Nest's own 5xx answers keep their body: /health/ready's 503 says what is down.
    if (exception instanceof HttpException) {
      const body = exception.getResponse();
      return [exception.getStatus(), typeof body === 'string' ? { message: body } : body];
    }
    this.logger.error('unexpected error', {
      error: exception instanceof Error ? exception.message : String(exception),
      stack: exception instanceof Error ? exception.stack : undefined,
    });
    return [
      500,
      { error: { reason: 'internal', message: 'internal error', fix: 'Retry; the log has the cause.' } },
    ];
  }
}

const ENCODING_FIX =
  'Send the body uncompressed (no Content-Encoding), or compressed as its Content-Encoding says: gzip, deflate, br or zstd.';

/**
 * The body parser's refusal of the body's Content-Encoding — one it does not take (415, whose shared
 * fix is about the charset), or a body that does not decompress as it says (a zlib error, 400, which
 * http-errors gives no `type`, unlike the parser's own) — on field `Content-Encoding`.
 */
function encodingRefusal(
  exception: unknown,
  status: number,
  message: string,
  encoding: string | string[] | undefined,
): ErrorBody | undefined {
  // Nest hands the parser's error on wrapped, as the HttpException's cause.
  const parsed = (exception as { cause?: unknown }).cause ?? exception;
  const { type, code } = parsed as { type?: unknown; code?: unknown };
  const refusal = { reason: 'invalid', field: 'Content-Encoding', fix: ENCODING_FIX };
  if (status === 415 && type === 'encoding.unsupported') return { ...refusal, message };
  const compressed = typeof encoding === 'string' && encoding.toLowerCase() !== 'identity';
  if (status !== 400 || type !== undefined || typeof code !== 'string' || !compressed) return undefined;
  return {
    ...refusal,
    message: `the body is not ${encoding} data as its Content-Encoding says (${message})`,
  };
}

/**
 * body-parser's 413 for a body that grew past the limit as it was read — sent chunked, or decompressed
 * (Content-Encoding) — in the terms of the one a Content-Length declares (http-edge.ts): its limit. Its
 * own message, "request entity too large", named neither the limit nor the body.
 */
function tooLargeMessage(exception: unknown): string | undefined {
  const parsed = (exception as { cause?: unknown }).cause ?? exception;
  const { type, limit } = (parsed ?? {}) as { type?: unknown; limit?: unknown };
  if (type !== 'entity.too.large' || typeof limit !== 'number') return undefined;
  return `the body is over the limit of ${limit} bytes (as read: chunked, or decompressed)`;
}

/** Nest's HttpException, or an http-errors error from body-parser (`status`, e.g. 413 entity.too.large). */
function httpStatusOf(exception: unknown): number | undefined {
  if (exception instanceof HttpException) return exception.getStatus();
  const status = (exception as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : undefined;
}
