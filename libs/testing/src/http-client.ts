/** A JSON-over-HTTP client for tests: real requests with global fetch, replies parsed when JSON. */
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

export function httpClient(baseUrl: string, defaultHeaders: Record<string, string> = {}): HttpClient {
  return async <T>(method: string, path: string, body?: unknown, options: RequestOptions = {}) => {
    const payload = options.raw ?? (body === undefined ? undefined : JSON.stringify(body));
    const response = await fetch(baseUrl + path, {
      method,
      headers: {
        ...defaultHeaders,
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      body: payload,
    });
    const text = await response.text();
    const isJson = response.headers.get('content-type')?.includes('json') && text.length > 0;
    return { status: response.status, body: (isJson ? JSON.parse(text) : text) as T };
  };
}

/** Path segment of a key, as docs/spec.md §5.2 asks: URL-encoded. */
export function keyPath(key: string): string {
  return `/v1/timers/${encodeURIComponent(key)}`;
}
