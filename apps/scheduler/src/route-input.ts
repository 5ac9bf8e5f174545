import type { CanActivate, ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { DECORATORS } from '@nestjs/swagger';
import { refusals } from '@sundial/core';
import { isApiPath } from './api-token';

/** What Express hands the guard: the matched route's path as declared (`/v1/timers/:key/history`). */
interface RoutedRequest {
  method: string;
  route?: { path?: unknown };
  query: Record<string, unknown>;
  /** undefined when the request had no body (parseBodies) */
  body?: unknown;
}

interface ApiParameter {
  name: string;
  in: string;
}

/**
 * Refuses, before the route runs, a `/v1` call with input the route does not take (docs/spec.md §5.2),
 * which it would otherwise ignore, leaving the caller to think it did something:
 * - a query parameter the route's `@ApiQuery` decorators do not name (a typo, `prefx=`, or a setting
 *   on a route without a query, `DELETE /v1/timers/:key?force=1`), or one given more than once
 *   (`?prefix=a&prefix=b`: which one would be meant?);
 * - a body on a route without an `@ApiBody` (`POST …/pause` with `{"delay": "1h"}`); `{}`, which some
 *   clients send on every POST, is taken as no body.
 * The decorators are the one list of what a route takes, for the OpenAPI document and for this check;
 * the route is named by its method and the path it was declared with, as Express matched it.
 * `/health` and `/metrics` are left alone: probes and scrapers may add their own query.
 */
export class RouteInputGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<RoutedRequest>();
    const path = request.route?.path;
    if (typeof path !== 'string' || !isApiPath(path)) return true;
    const parameters =
      this.reflector.get<ApiParameter[] | undefined>(DECORATORS.API_PARAMETERS, context.getHandler()) ?? [];
    // HEAD runs the GET route; the route is documented as GET.
    const route = `${request.method === 'HEAD' ? 'GET' : request.method} ${path}`;
    const withBody = parameters.some((p) => p.in === 'body');
    // Decorators apply bottom-up: reversed, the names come in the order the source lists them.
    const known = parameters.filter((p) => p.in === 'query').map((p) => p.name);
    checkQuery(route, request.query, known.reverse(), withBody);
    if (!withBody && !isEmptyBody(request.body)) throw refusals.unexpectedBody(route);
    return true;
  }
}

function isEmptyBody(body: unknown): boolean {
  return (
    body === undefined ||
    (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0)
  );
}

/**
 * Refuses a query that names a parameter `known` does not hold, or names one more than once (Express's
 * query parser makes that an array). Every value that passes is one string.
 */
function checkQuery(
  route: string,
  query: Record<string, unknown>,
  known: readonly string[],
  withBody: boolean,
): void {
  for (const [name, value] of Object.entries(query)) {
    if (!known.includes(name)) throw refusals.unknownQueryParameter(name, route, known, withBody);
    if (typeof value !== 'string') throw refusals.repeatedQueryParameter(name, route, value);
  }
}
