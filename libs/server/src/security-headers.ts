import type { INestApplication } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Every answer: no MIME sniffing, no referrer sent from a page of ours, never shown in a frame. */
const COMMON_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // frame-ancestors says the same to browsers that read CSP; this is for those that do not.
  'x-frame-options': 'DENY',
};

const NEVER_FRAMED = "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * The Content-Security-Policy of each kind of answer. The operator UI loads only its own files. Swagger
 * UI at `/docs` too, but its page carries two inline `<style>` blocks and its components set inline
 * styles, and it shows its icons as `data:` images. JSON and everything else may load nothing.
 */
const POLICIES: { prefix: RegExp; policy: string }[] = [
  { prefix: /^\/ui(\/|$)/, policy: `default-src 'self'; object-src 'none'; ${NEVER_FRAMED}` },
  {
    prefix: /^\/docs(\/|$)/,
    policy: `default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; ${NEVER_FRAMED}`,
  },
];
const DEFAULT_POLICY = `default-src 'none'; ${NEVER_FRAMED}`;

/**
 * Sets the security headers on every answer of the app (the scheduler's, the worker's health and
 * metrics port), refusals included (install first): a page of the UI or of `/docs` framed by another
 * site could be clicked through (clickjacking its pause, trigger and cancel buttons), and a JSON answer
 * must never be sniffed into a page.
 */
export function setSecurityHeaders(app: INestApplication): void {
  app.use((request: IncomingMessage, response: ServerResponse, next: () => void) => {
    for (const [name, value] of Object.entries(securityHeaders(request.url ?? '/'))) {
      response.setHeader(name, value);
    }
    next();
  });
}

/** The security headers of an answer to `url` (also written by hand on an answer Express never sees). */
export function securityHeaders(url: string): Record<string, string> {
  return { ...COMMON_HEADERS, 'content-security-policy': policyFor(url) };
}

/** The policy for a request's path (the origin form; an absolute-form URL gets the strictest). */
export function policyFor(url: string): string {
  const path = url.split('?')[0];
  return POLICIES.find(({ prefix }) => prefix.test(path))?.policy ?? DEFAULT_POLICY;
}
