import type { INestApplication } from '@nestjs/common';
import { SundialError } from '@sundial/core';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { hostRefusal, type AllowedHosts } from './allowed-hosts';
import { apiTokenCheck, isApiPath } from './api-token';
import { crossSiteRefusal } from './cross-site';
import { BODY_TOO_LARGE_FIX } from './http-error.filter';

/**
 * What the scheduler refuses before any body is read (call before the body parser is installed):
 * a request whose `Host` is not a name it answers to (403, `allowed-hosts.ts`: DNS rebinding, whatever
 * the path), a `/v1` call without the API token (401, whatever its body), a state-changing request a browser sent
 * for another site's page (403, `cross-site.ts`), and a body whose Content-Length is
 * over the limit (413 at once: body-parser would otherwise wait for the whole declared body before
 * answering). And Node's own HTTP parser refusals (a malformed request line, an unknown method, a
 * bad header), which never reach Express, answer in the same JSON error shape.
 */
export function refuseBeforeBody(
  app: INestApplication,
  options: { apiToken?: string; allowedHosts: AllowedHosts; bodyLimit: number },
): void {
  const refuseToken = apiTokenCheck(options.apiToken);
  app.use((request: IncomingMessage, response: ServerResponse, next: () => void) => {
    const foreignHost = hostRefusal(request.headers.host, options.allowedHosts);
    if (foreignHost) return refuse(response, 403, foreignHost);
    const unauthorized = isApiPath(targetPath(request.url)) && refuseToken(request.headers.authorization);
    if (unauthorized) return refuse(response, 401, unauthorized);
    const crossSite = crossSiteRefusal(request);
    if (crossSite) return refuse(response, 403, crossSite);
    const declared = Number(request.headers['content-length']);
    if (declared > options.bodyLimit) {
      return refuse(
        response,
        413,
        new SundialError({
          reason: 'payload-too-large',
          message: `the body declares ${declared} bytes, over the limit of ${options.bodyLimit}`,
          fix: BODY_TOO_LARGE_FIX,
        }),
      );
    }
    next();
  });
  (app.getHttpServer() as Server).on('clientError', answerParserError);
}

/**
 * The path a request targets, as Express routes it: the origin form `/v1/timers?…`, or the absolute
 * form `http://host/v1/timers` a client may send (HTTP/1.1 servers must take it). ApiTokenGuard checks
 * the token again on the route matched, whatever this makes of a URL.
 */
function targetPath(url = '/'): string {
  if (url.startsWith('/')) return url.split('?')[0];
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/** Answers before the body was read: the connection closes, so the unread body is never waited for. */
function refuse(response: ServerResponse, status: number, error: SundialError): void {
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

function answerParserError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const { status, text, message, fix } = PARSER_REFUSALS[error.code ?? ''] ?? {
    status: 400,
    text: 'Bad Request',
    message: `the request is not valid HTTP/1.1 (${error.code ?? 'parse error'})`,
    fix: WELL_FORMED_FIX,
  };
  const body = JSON.stringify({ error: { reason: 'invalid', message, fix } });
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
