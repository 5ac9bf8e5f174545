/**
 * The scheduler's HTTP API (docs/spec.md §5.2) from the browser: same origin, JSON, and the API token
 * (kept in sessionStorage: gone when the tab closes) as `Authorization: Bearer` when one is set.
 */

import { now, serverClock } from './clock.js';
import { NOW_HEADER } from './server-clock.js';
import { noteLost, writeKey } from './write-key.js';

const TOKEN_KEY = 'sundial.apiToken';

/** A refusal as the API sends it: `{ error: { reason, field?, message, fix, detail? } }`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly fix: string,
    message: string,
    readonly field?: string,
    readonly detail?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export function apiToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setApiToken(token: string | null): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** `/ui/…` is served by the scheduler; the API is at `/v1` of the same origin. */
const API_ROOT = new URL('../v1/', document.baseURI);

export async function api<T>(
  method: string,
  path: string,
  query: Record<string, string> = {},
  json?: Record<string, unknown>,
): Promise<T> {
  const url = new URL(path, API_ROOT);
  for (const [name, value] of Object.entries(query)) if (value !== '') url.searchParams.set(name, value);
  const token = apiToken();
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  if (json) headers['content-type'] = 'application/json';
  // a press's write carries its key (write-key.ts): a lost answer can be asked again, applied once
  const key = writeKey(method, path);
  if (key !== undefined) headers['idempotency-key'] = key;
  const lost = key === undefined ? () => undefined : () => noteLost({ method, path, query, json, key });
  const sentAt = serverClock.local();
  let response: Response;
  try {
    response = await fetch(url, { method, headers, body: json ? JSON.stringify(json) : undefined });
  } catch (error) {
    lost();
    throw unreachable(error, key !== undefined);
  }
  // every answer says the scheduler's now, refusals too (clock.ts)
  serverClock.note(response.headers.get(NOW_HEADER), sentAt, serverClock.local());
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    throw notTheApi(response);
  }
  if (!response.ok) {
    const error = toApiError(response.status, body);
    if (error.detail?.code === 'outcome-unknown') lost();
    throw error;
  }
  return body as T;
}

/**
 * The scheduler's now, for a view that needs it before its own request (the timeline's window): from
 * the answers so far, else from one that reads nothing (`OPTIONS /v1/timers`, answered whatever the token).
 */
export async function serverNow(): Promise<number> {
  if (serverClock.now() === undefined) await api('OPTIONS', 'timers').catch(() => undefined);
  return now();
}

interface ErrorBody {
  error?: {
    reason?: string;
    field?: string;
    message?: string;
    fix?: string;
    detail?: Record<string, unknown>;
  };
}

/**
 * No answer at all (the scheduler stopped, the network down): the browser's bare "Failed to fetch" said
 * neither what failed nor what to do. A write's may have reached the scheduler before the connection
 * went, so it is not said to have changed nothing.
 */
function unreachable(error: unknown, write: boolean): ApiError {
  const why = error instanceof Error ? error.message : String(error);
  const outcome = write ? 'it may or may not have been applied' : 'nothing was read';
  return new ApiError(
    0,
    'unreachable',
    `Check that the scheduler at ${location.origin} is running and reachable from this browser, then press Refresh.`,
    `the scheduler did not answer (${why}): ${outcome}`,
  );
}

/**
 * An answer that is not the API's JSON: a proxy's or load balancer's error page (a 502 while the
 * scheduler restarts). Before, the page showed the JSON parser's "Unexpected token '<'".
 */
function notTheApi(response: Response): ApiError {
  const type = response.headers.get('content-type') ?? 'no content type';
  return new ApiError(
    response.status,
    `http-${response.status}`,
    "Something between this browser and the scheduler answered instead of it (a proxy's error page): check that the scheduler is running and the proxy's route to it, then press Refresh.",
    `the answer (${response.status} ${response.statusText}, ${type}) is not the scheduler's API`,
  );
}

function toApiError(status: number, body: unknown): ApiError {
  const error = (body as ErrorBody | null)?.error;
  return new ApiError(
    status,
    error?.reason ?? `http-${status}`,
    error?.fix ?? '',
    error?.message ?? `the scheduler answered ${status}`,
    error?.field,
    error?.detail,
  );
}

/** Path of a timer's route: keys are URL-encoded in paths. */
export function timerPath(key: string, action = ''): string {
  return `timers/${encodeURIComponent(key)}${action ? `/${action}` : ''}`;
}
