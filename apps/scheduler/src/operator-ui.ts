import type { NestExpressApplication } from '@nestjs/platform-express';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';

/** dist/apps/scheduler/ui: the UI's modules (its own tsc build) and its HTML and CSS (copy-assets). */
const UI_DIR = join(__dirname, '..', 'ui');

/**
 * The operator UI at `/ui/` (docs/spec.md §5.2): static files from the build, same origin as the API,
 * so it needs no CORS. The files are public; every `/v1` call they make carries the API token the
 * operator enters. The policy lets the page load nothing but its own files.
 */
export function serveOperatorUi(app: NestExpressApplication): void {
  app.useStaticAssets(UI_DIR, {
    prefix: '/ui/',
    index: 'index.html',
    setHeaders: (response: ServerResponse) => {
      response.setHeader(
        'content-security-policy',
        "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; base-uri 'self'",
      );
      response.setHeader('x-content-type-options', 'nosniff');
      response.setHeader('cache-control', 'no-cache');
    },
  });
}
