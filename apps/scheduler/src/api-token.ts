import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { SundialError } from '@sundial/core';
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * With SUNDIAL_API_TOKEN set, a `/v1` call needs `Authorization: Bearer <token>`. Returns what
 * refuses a call's Authorization header, or null when it may go on.
 */
export function apiTokenCheck(
  token: string | undefined,
): (authorization: string | undefined) => SundialError | null {
  if (token === undefined) return () => null;
  const expected = digest(token);
  return (authorization = '') => {
    const match = /^Bearer\s+(.+)$/i.exec(authorization);
    // Comparing digests keeps the comparison constant-time whatever the length sent.
    if (match && timingSafeEqual(digest(match[1].trim()), expected)) return null;
    return new SundialError({
      reason: 'unauthorized',
      field: 'authorization',
      message: match ? 'the API token sent is not the configured one' : 'missing Authorization header',
      fix: 'Send the header `Authorization: Bearer <SUNDIAL_API_TOKEN>`.',
    });
  };
}

/**
 * The token check on the route Express matched, whatever the request's URL looked like: the check at
 * the edge (http-edge.ts, before the body is read) goes by the URL, and a URL that routes to `/v1`
 * without looking like it (`/V1/timers`: routes match without regard to case; `GET http://host/v1/…`,
 * the absolute form) once passed it without a token. This one goes by the route as declared.
 */
export class ApiTokenGuard implements CanActivate {
  private readonly refuse: (authorization: string | undefined) => SundialError | null;

  constructor(token: string | undefined) {
    this.refuse = apiTokenCheck(token);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context
      .switchToHttp()
      .getRequest<{ route?: { path?: unknown }; headers: { authorization?: string } }>();
    const path = request.route?.path;
    const refused = typeof path === 'string' && isApiPath(path) && this.refuse(request.headers.authorization);
    if (refused) throw refused;
    return true;
  }
}

/** Whether a path is the API's, `/v1` (as Express routes: without regard to case). */
export function isApiPath(path: string): boolean {
  return /^\/v1(\/|$)/i.test(path);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
