import type { INestApplication } from '@nestjs/common';
import { NOW_HEADER, type SundialError } from '@sundial/core';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type AllowedHosts, hostRefusal } from './allowed-hosts';
import { securityHeaders, setSecurityHeaders } from './security-headers';

/**
 * What every HTTP port of Sundial's apps answers the same way, installed first (docs/spec.md §5.2,
 * docs/operations.md "HTTP ports"): `Sundial-Now` and the security headers on every answer, a request
 * whose `Host` is not a name the app answers to refused 403 before anything else (`allowed-hosts.ts`: DNS
 * rebinding, whatever the path), and Node's own HTTP parser refusals (a malformed request line, an
 * unknown method, a bad header), which never reach Express, in the same JSON error shape and with the
 * security headers.
 */
export function guardHttpEdge(
  app: INestApplication,
  options: { allowedHosts: AllowedHosts; app: 'scheduler' | 'worker'; now: () => number },
): void {
  stampServerNow(app, options.now);
  setSecurityHeaders(app);
  app.use((request: IncomingMessage, response: ServerResponse, next: () => void) => {
    const foreignHost = hostRefusal(request.headers.host, options.allowedHosts, options.app);
    if (foreignHost) return refuseEarly(response, 403, foreignHost);
    next();
  });
  (app.getHttpServer() as Server).on('clientError', answerParserError);
}

/**
 * Stamps `Sundial-Now` (NOW_HEADER, docs/spec.md §5.2) on every answer: Redis's now as the app estimates
 * it (§4.4), in epoch ms, when the request came. Due times are on that clock: the operator UI and the CLI
 * read "now" from it, not from their host's clock (a `Date` header has whole seconds only). First, so
 * that the refusals of the edge (a foreign Host, a missing token) carry it too; Node's parser refusals,
 * written before any route, do not (no estimate is read for a request that is not one).
 */
function stampServerNow(app: INestApplication, now: () => number): void {
  app.use((_request: IncomingMessage, response: ServerResponse, next: () => void) => {
    response.setHeader(NOW_HEADER, String(now()));
    next();
  });
}

/** Answers before the body was read: the connection closes, so the unread body is never waited for. */
export function refuseEarly(response: ServerResponse, status: number, error: SundialError): void {
  const body = JSON.stringify({ error: error.toJSON() });
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  response.end(body);
}

const WELL_FORMED_FIX =
  'Send a well-formed HTTP/1.1 request with a standard method (GET, POST, PUT, DELETE), e.g. with curl.';

/** Node's parser refusals that are not about a malformed request: their status, and what to do. */
const PARSER_REFUSALS: Record<string, { status: number; text: string; message: string; fix: string }> = {
  // A path with a key far over 256 characters, or a huge query or header, not a malformed request.
  HPE_HEADER_OVERFLOW: {
    status: 431,
    text: 'Request Header Fields Too Large',
    message: 'the request line and headers are larger than the server takes (HPE_HEADER_OVERFLOW)',
    fix: 'Shorten the URL and headers (16 KiB in all): a timer key is at most 256 characters, URL-encoded in the path.',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    text: 'Request Timeout',
    message: 'the request was not received in time (ERR_HTTP_REQUEST_TIMEOUT)',
    fix: 'Send the whole request at once, without pausing between its parts.',
  },
};

/** Written on the socket: the request never became one Express answers, so its headers are set here. */
function answerParserError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const { status, text, message, fix } = PARSER_REFUSALS[error.code ?? ''] ?? {
    status: 400,
    text: 'Bad Request',
    message: `the request is not valid HTTP/1.1 (${error.code ?? 'parse error'})`,
    fix: WELL_FORMED_FIX,
  };
  const body = JSON.stringify({ error: { reason: 'invalid', message, fix } });
  // No request URL was read: the strictest policy, the one of JSON answers.
  const headers = Object.entries({
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
    ...securityHeaders('/'),
  }).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(`HTTP/1.1 ${status} ${text}\r\n${headers.join('')}\r\n${body}`);
}
