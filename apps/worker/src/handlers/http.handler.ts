import type { JsonValue, TimerContext, TimerHandler } from '@sundial/core';
import { MAX_TIMEOUT_MS, refusals, SundialError } from '@sundial/core';
import { context, propagation } from '@opentelemetry/api';
import { lookup } from 'node:dns/promises';
import { AllowList } from './allow-list';
import { ipLiteral, isInternalAddress } from './internal-address';
import { pinnedRequest, type PinnedTarget } from './pinned-request';
import { forbiddenHeader, hasHeader, withoutBodyHeaders, withoutCredentials } from './request-headers';

/** Resolves a hostname to the one address a call will connect to (tests inject one). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }>;

/** The `http` handler's payload (docs/spec.md §5.3). */
interface HttpRequestPayload {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: JsonValue;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const PAYLOAD_FIX =
  'Give the http handler a payload { url, method?, headers?, body?, timeoutMs? } with an absolute http(s) URL.';
const MAX_REDIRECTS = 5;

/**
 * Calls `payload.url`: a 2xx answer is ok, anything else fails with the status in the message.
 * Only SUNDIAL_HTTP_ALLOW hosts are called — including every redirect hop, which is followed by
 * hand so a redirect cannot lead elsewhere (no SSRF). Each hop's name is resolved once, its address
 * checked (see `pin`), and the request sent to that address. Aborts on `ctx.signal` or after `timeoutMs`.
 */
export function createHttpHandler(
  allow: readonly string[],
  { resolve = (hostname) => lookup(hostname) }: { resolve?: Resolver } = {},
): TimerHandler {
  const allowList = new AllowList(allow);
  return async (payload: JsonValue, ctx: TimerContext) => {
    const request = parsePayload(payload);
    const signal = AbortSignal.any([
      ctx.signal,
      AbortSignal.timeout(request.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    ]);
    let headers: Record<string, string> = {};
    // The run's trace goes on with the call (W3C `traceparent`; nothing when tracing is off; the http
    // instrumentation, when loaded, puts its client span's there). The payload's headers come after.
    propagation.inject(context.active(), headers);
    Object.assign(headers, request.headers);
    let body: string | undefined;
    if (request.body !== undefined) {
      body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
      if (typeof request.body !== 'string' && !hasHeader(headers, 'content-type')) {
        headers['content-type'] = 'application/json';
      }
    }
    let method = (request.method ?? (body === undefined ? 'GET' : 'POST')).toUpperCase();
    let target = await pin(targetUrl(request.url, allowList), allowList, resolve);
    for (let hop = 0; ; hop++) {
      const response = await pinnedRequest(target, { method, headers, body, signal });
      const { location } = response;
      if (response.status >= 300 && response.status < 400 && location && hop < MAX_REDIRECTS) {
        const from = target.url.origin;
        target = await pin(targetUrl(new URL(location, target.url).href, allowList), allowList, resolve);
        // As fetch and curl do: the payload's credentials go to the origin it named, not on to another.
        if (target.url.origin !== from) headers = withoutCredentials(headers);
        // As browsers do: 303 (and 301/302 after a POST) continue as a GET without body.
        if (
          response.status === 303 ||
          ((response.status === 301 || response.status === 302) && method === 'POST')
        ) {
          method = 'GET';
          body = undefined;
          headers = withoutBodyHeaders(headers);
        }
        continue;
      }
      if (response.status < 200 || response.status >= 300) {
        const { origin, pathname } = target.url;
        throw new Error(`HTTP ${response.status} ${response.statusText} from ${method} ${origin}${pathname}`);
      }
      return;
    }
  };
}

function targetUrl(text: string, allowList: AllowList): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refusals.invalid('payload.url', `"${text}" is not an absolute URL`, PAYLOAD_FIX);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refusals.invalid('payload.url', `"${url.protocol}" is not http: or https:`, PAYLOAD_FIX);
  }
  if (!allowList.allows(url)) {
    throw new SundialError({
      reason: 'forbidden-target',
      field: 'payload.url',
      message: `${url.host} is not in SUNDIAL_HTTP_ALLOW`,
      fix: `Add "${url.host}" (or its hostname, for every port) to SUNDIAL_HTTP_ALLOW on the workers.`,
    });
  }
  return url;
}

/**
 * Resolves the URL's host once and checks the ADDRESS. The rule: a name in SUNDIAL_HTTP_ALLOW may
 * lead to any public address, but an internal one (loopback, private, link-local, unique-local v6,
 * v4-mapped forms of those...: `isInternalAddress`) only when that address is itself an entry for
 * this port. So `localhost:8080` alone does not reach 127.0.0.1: add `127.0.0.1:8080` too. Why: a
 * name's answer is the name owner's to change (DNS rebinding), an address entry is the operator's.
 */
async function pin(url: URL, allowList: AllowList, resolve: Resolver): Promise<PinnedTarget> {
  const literal = ipLiteral(url.hostname);
  const { address, family } = literal
    ? { address: literal, family: literal.includes(':') ? 6 : 4 }
    : await resolve(url.hostname);
  if (isInternalAddress(address) && !allowList.allowsAddress(address, url)) {
    throw new SundialError({
      reason: 'forbidden-target',
      field: 'payload.url',
      message: `${url.host} resolves to ${address}, an internal address not allowed by address in SUNDIAL_HTTP_ALLOW`,
      fix: 'Call a public host, or list the address itself in SUNDIAL_HTTP_ALLOW on the workers (an IP entry such as "127.0.0.1:8080" or "[::1]:8080").',
    });
  }
  return { url, address, family };
}

function parsePayload(payload: JsonValue): HttpRequestPayload {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw refusals.invalid(
      'payload',
      'the http handler needs an object payload { url, method?, headers?, body?, timeoutMs? }',
      PAYLOAD_FIX,
    );
  }
  const { url, method, headers, timeoutMs } = payload;
  if (typeof url !== 'string') throw refusals.invalid('payload.url', 'url must be a string', PAYLOAD_FIX);
  if (method !== undefined && typeof method !== 'string')
    throw refusals.invalid('payload.method', 'method must be a string', PAYLOAD_FIX);
  if (
    headers !== undefined &&
    (headers === null ||
      typeof headers !== 'object' ||
      Array.isArray(headers) ||
      Object.values(headers).some((value) => typeof value !== 'string'))
  ) {
    throw refusals.invalid('payload.headers', 'headers must be an object of strings', PAYLOAD_FIX);
  }
  const forbidden = headers && forbiddenHeader(headers as Record<string, string>);
  if (forbidden) {
    throw refusals.invalid(
      'payload.headers',
      `the header "${forbidden}" is the handler's to set, not the payload's`,
      'Leave out Host, Content-Length, Transfer-Encoding, Connection and the other hop-by-hop headers: the handler writes them from the url and body.',
    );
  }
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > MAX_TIMEOUT_MS)
  ) {
    throw refusals.invalid(
      'payload.timeoutMs',
      `timeoutMs must be a positive number of milliseconds, at most ${MAX_TIMEOUT_MS}`,
      PAYLOAD_FIX,
    );
  }
  return payload as unknown as HttpRequestPayload;
}
