import { request } from 'node:http';

/** A reply of httpClient: its status, and its body parsed when JSON. */
export interface HttpReply<T> {
  status: number;
  body: T;
}

export interface ErrorBody {
  error: { reason: string; field?: string; message: string; fix: string; detail?: Record<string, unknown> };
}

export interface RequestOptions {
  /** sent as is instead of JSON-encoding `body` */
  raw?: string;
  headers?: Record<string, string>;
}

export type HttpClient = <T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  options?: RequestOptions,
) => Promise<HttpReply<T>>;

/** Methods whose requests carry a body. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * A JSON-over-HTTP client for tests: real requests with `node:http`, replies parsed when JSON. Each
 * request has a connection of its own (`agent: false`, `Connection: close`), so it meets a listening app
 * or a refused connection, never a kept-alive socket the app is closing: with global `fetch`, a CI-like
 * run failed `other side closed` on an app that stayed up (docs/design.md "Where the run's CPU goes").
 * A request also costs the test ~0.3 ms of CPU here against fetch's 1.1–1.4 ms.
 */
export function httpClient(baseUrl: string, defaultHeaders: Record<string, string> = {}): HttpClient {
  return <T>(method: string, path: string, body?: unknown, options: RequestOptions = {}) => {
    const payload = options.raw ?? (body === undefined ? undefined : JSON.stringify(body));
    // as fetch sends them: a length of 0 where a body is expected, not a chunked empty body
    const bodyHeaders =
      payload !== undefined
        ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
        : BODY_METHODS.has(method.toUpperCase())
          ? { 'content-length': 0 }
          : {};
    const headers = { ...defaultHeaders, ...bodyHeaders, ...options.headers };
    return new Promise<HttpReply<T>>((resolve, reject) => {
      const sent = request(baseUrl + path, { method, headers, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const isJson = response.headers['content-type']?.includes('json') && text.length > 0;
          resolve({ status: response.statusCode ?? 0, body: (isJson ? JSON.parse(text) : text) as T });
        });
      });
      sent.on('error', reject);
      sent.end(payload);
    });
  };
}

/** Path segment of a key, as docs/spec.md §5.2 asks: URL-encoded. */
export function keyPath(key: string): string {
  return `/v1/timers/${encodeURIComponent(key)}`;
}
