import type { INestApplication } from '@nestjs/common';
import { SundialError } from '@sundial/core';
import { refuseEarly } from '@sundial/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiTokenCheck, isApiPath } from './api-token';
import { crossSiteRefusal } from './cross-site';
import { BODY_TOO_LARGE_FIX } from './http-error.filter';

/**
 * What the scheduler refuses before any body is read (call after `guardHttpEdge`, which refuses a
 * foreign `Host`, and before the body parser is installed): a `/v1` call without the API token (401,
 * whatever its body), a state-changing request a browser sent for another site's page (403,
 * `cross-site.ts`), and a body whose Content-Length is over the limit (413 at once: body-parser would
 * otherwise wait for the whole declared body before answering).
 */
export function refuseBeforeBody(
  app: INestApplication,
  options: { apiToken?: string; bodyLimit: number },
): void {
  const refuseToken = apiTokenCheck(options.apiToken);
  app.use((request: IncomingMessage, response: ServerResponse, next: () => void) => {
    const unauthorized = isApiPath(targetPath(request.url)) && refuseToken(request.headers.authorization);
    if (unauthorized) return refuseEarly(response, 401, unauthorized);
    const crossSite = crossSiteRefusal(request);
    if (crossSite) return refuseEarly(response, 403, crossSite);
    const declared = Number(request.headers['content-length']);
    if (declared > options.bodyLimit) {
      return refuseEarly(
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
