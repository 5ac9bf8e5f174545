import type { NestExpressApplication } from '@nestjs/platform-express';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';

/** dist/apps/scheduler/ui: the UI's modules (its own tsc build) and its HTML and CSS (copy-assets). */
const UI_DIR = join(__dirname, '..', 'ui');

/**
 * The operator UI at `/ui/` (docs/spec.md §5.2): static files from the build, same origin as the API,
 * so it needs no CORS. The files are public; every `/v1` call they make carries the API token the
 * operator enters. Its Content-Security-Policy (its own files only) is libs/server/src/security-headers.ts's.
 */
export function serveOperatorUi(app: NestExpressApplication): void {
  app.useStaticAssets(UI_DIR, {
    prefix: '/ui/',
    index: 'index.html',
    setHeaders: (response: ServerResponse) => {
      response.setHeader('cache-control', 'no-cache');
    },
  });
}
