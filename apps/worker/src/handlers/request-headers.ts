/**
 * Which of a payload's headers the `http` handler sends, and which it keeps across a redirect
 * (docs/spec.md §5.3).
 */

/**
 * Headers a payload may not set. `Host` would send the request to another virtual host (and TLS
 * name) on the allowed address than the URL the allow-list checked; the framing and hop-by-hop ones
 * (`Content-Length`, `Transfer-Encoding`, `Connection`, …) are the handler's to write: set by a payload
 * they can make the target read the body as a second request (request smuggling).
 */
const FORBIDDEN = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);

/** Headers that carry credentials: never sent on to another origin by a redirect (as fetch and curl do). */
const CREDENTIALS = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** The first header name of `headers` a payload may not set, if any. */
export function forbiddenHeader(headers: Record<string, string>): string | undefined {
  return Object.keys(headers).find((name) => FORBIDDEN.has(name.toLowerCase()));
}

/** `headers` without the credentials, for a redirect that leaves the origin they were given for. */
export function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIALS.has(name.toLowerCase())));
}

/** `headers` without those describing a body (`Content-Type`, …), for a redirect that drops the body. */
export function withoutBodyHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !name.toLowerCase().startsWith('content-')),
  );
}

export function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((header) => header.toLowerCase() === name);
}
