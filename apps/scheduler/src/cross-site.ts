import { SundialError } from '@sundial/core';
import type { IncomingMessage } from 'node:http';

/** Methods that change nothing: a cross-site page may send them, but cannot read the answer (no CORS). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses a state-changing request a browser sent on behalf of another site's page (CSRF): a form or a
 * `no-cors` fetch POST needs no preflight, and every body is read as JSON, so without an API token a
 * page the operator visits could schedule, trigger or pause. Browsers say where a request comes from:
 * `Sec-Fetch-Site` (anything but `same-origin` or `none`), else `Origin` (another host than the one
 * called, or `null`). Clients outside a browser (curl, the CLI, SDKs) send neither and go on, as does
 * the operator UI, which is same-origin. Returns null when the request may go on.
 */
export function crossSiteRefusal(request: IncomingMessage): SundialError | null {
  if (SAFE_METHODS.has(request.method ?? 'GET')) return null;
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  const crossSite =
    site !== undefined
      ? site !== 'same-origin' && site !== 'none'
      : origin !== undefined && !sameHost(origin, request);
  if (!crossSite) return null;
  return new SundialError({
    reason: 'forbidden',
    message: `a cross-site ${request.method} from a browser page (Origin ${origin ?? 'not sent'}, Sec-Fetch-Site ${site ?? 'not sent'}) is refused`,
    fix: 'Call the API from the operator UI at /ui/ or from a client outside the browser (curl, the sundial CLI); set SUNDIAL_API_TOKEN so that every call needs the token.',
  });
}

function sameHost(origin: string, request: IncomingMessage): boolean {
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false; // `null`: a sandboxed frame, a file: page, a redirect across origins
  }
}
