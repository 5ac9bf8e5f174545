import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isApiPath } from './api-token';

/** The methods a request path takes (`GET, HEAD, PUT, DELETE, OPTIONS`), or undefined: no route has it. */
export type AllowedMethods = (path: string) => string[] | undefined;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/**
 * The methods of each path of the OpenAPI document, which lists the routes as the controllers declare
 * them: a path matches a route segment by segment, a `{key}` any one non-empty segment (a key is
 * URL-encoded, its `/` as `%2F`), the rest without regard to case (as Express routes).
 */
export function allowedMethods(document: () => OpenAPIObject): AllowedMethods {
  let routes: { segments: string[]; methods: string[] }[] | undefined;
  return (path) => {
    // The document is built at its first use (scheduler-app.ts): the routes read from it then.
    routes ??= Object.entries(document().paths).map(([declared, item]) => ({
      segments: declared.toLowerCase().split('/'),
      methods: METHODS.filter((method) => method in item).map((method) => method.toUpperCase()),
    }));
    const segments = path
      .replace(/(.)\/$/, '$1')
      .toLowerCase()
      .split('/');
    const route = routes.find(
      (candidate) =>
        candidate.segments.length === segments.length &&
        candidate.segments.every((part, i) =>
          /^\{\w+\}$/.test(part) ? segments[i] !== '' : part === segments[i],
        ),
    );
    if (!route) return undefined;
    return [...route.methods, ...(route.methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'];
  };
}

/**
 * The paths of docs/spec.md §5.2's table that the OpenAPI document does not list — the metrics, the
 * document itself and its page, the operator UI's page — take GET (and HEAD): another method on them is
 * 405 with `Allow` as on a route's path, not 404 "Cannot POST /metrics", and OPTIONS answers their `Allow`.
 */
const GET_PAGES = new Set(['/metrics', '/docs', '/docs/', '/docs-json', '/docs-yaml', '/ui/']);

export function withPages(allowed: AllowedMethods): AllowedMethods {
  return (path) => allowed(path) ?? (GET_PAGES.has(path) ? ['GET', 'HEAD', 'OPTIONS'] : undefined);
}

/**
 * What the router would get wrong (docs/spec.md §5.2), answered before it runs:
 * - `OPTIONS` on a route's path: 204 with `Allow` (the router had no route for it: 404);
 * - a `/v1` path ending in `/` (`GET /v1/timers/`, a key left empty): 404 saying so, where the router
 *   took it for the path without the slash (a list instead of a timer, a schedule on `POST …/`).
 * A route's path with a method it does not take is answered 405 with `Allow` (HttpErrorFilter).
 */
export function answerRouteEdges(app: NestExpressApplication, allowed: AllowedMethods): void {
  app.use((request: IncomingMessage, response: ServerResponse, next: () => void) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path.length > 4 && path.endsWith('/') && isApiPath(path)) {
      const body = JSON.stringify({
        error: {
          reason: 'not-found',
          message: `no route ${request.method} ${path}: the path ends with "/" (a key left empty?)`,
          fix: 'Remove the trailing "/"; a key goes URL-encoded after /v1/timers/ (a "/" in it as %2F).',
        },
      });
      response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
      return void response.end(body);
    }
    const methods = request.method === 'OPTIONS' ? allowed(path) : undefined;
    if (methods) {
      response.writeHead(204, { allow: methods.join(', ') });
      return void response.end();
    }
    next();
  });
}
