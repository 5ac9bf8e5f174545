import type { INestApplication } from '@nestjs/common';
import { SundialError } from '@sundial/core';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { apiTokenCheck } from './api-token';
import { BODY_TOO_LARGE_FIX } from './http-error.filter';

/**
 * What the scheduler refuses before any body is read (call before the body parser is installed):
 * a `/v1` call without the API token (401, whatever its body), and a body whose Content-Length is
 * over the limit (413 at once: body-parser would otherwise wait for the whole declared body before
 * answering). And Node's own HTTP parser refusals (a malformed request line, an unknown method, a
 * bad header), which never reach Express, answer in the same JSON error shape.
 */
export function refuseBeforeBody(
  app: INestApplication,
  options: { apiToken?: string; bodyLimit: number },
): void {
  const refuseToken = apiTokenCheck(options.apiToken);
  app.use((request: IncomingMessage, response: ServerResponse, next: () => void) => {
    const unauthorized =
      /^\/v1(\/|\?|$)/.test(request.url ?? '') && refuseToken(request.headers.authorization);
    if (unauthorized) return refuse(response, 401, unauthorized);
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

const PARSER_STATUS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

function answerParserError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const [status, text] = PARSER_STATUS[error.code ?? ''] ?? [400, 'Bad Request'];
  const body = JSON.stringify({
    error: {
      reason: 'invalid',
      message: `the request is not valid HTTP/1.1 (${error.code ?? 'parse error'})`,
      fix: 'Send a well-formed HTTP/1.1 request with a standard method (GET, POST, PUT, DELETE), e.g. with curl.',
    },
  });
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
