import { CliError, EXIT, type ErrorFields, usageError } from './cli-error';
import { cliFix, cliMessage, keyArgument, type RefusalContext } from './cli-fix';
import { type Answer, send } from './send';
// the module itself, import-free, not @sundial/core's index (the operator UI keeps its now with it too)
import { ServerClock } from '../../../libs/core/src/browser/server-clock';
import { waitBound } from './wait-bound';

/** The scheduler's HTTP API (docs/spec.md §5.2) at SUNDIAL_URL, with SUNDIAL_TOKEN as the bearer token. */
export interface SundialHttp {
  readonly url: string;
  request<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
  /**
   * A write's `request`, and whether its answer is a replay: the first answer of its Idempotency-Key
   * given again (`Idempotent-Replayed: true`, docs/spec.md §5.2) — a retry that changed nothing.
   */
  write<T>(method: string, path: string, options?: RequestOptions): Promise<Written<T>>;
  /**
   * The scheduler's now (epoch ms, its `Sundial-Now`): from the latest answer, else from one request that
   * reads nothing (`OPTIONS /v1/timers`); this host's clock only for a scheduler that does not say it.
   */
  now(): Promise<number>;
}

export interface Written<T> {
  body: T;
  replayed: boolean;
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** the timer the request is about: a refusal's fix names it in the command to run */
  key?: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:3000';
/** How long a request may take before the CLI gives up on it (SUNDIAL_TIMEOUT_MS). */
export const DEFAULT_TIMEOUT_MS = 30_000;

export function sundialHttp(env: NodeJS.ProcessEnv = process.env): SundialHttp {
  const url = (env.SUNDIAL_URL?.trim() || DEFAULT_URL).replace(/\/+$/, '');
  const token = env.SUNDIAL_TOKEN?.trim();
  const clock = new ServerClock(() => performance.now());
  const http: SundialHttp = {
    url,
    async now() {
      if (clock.now() === undefined) await exchange('OPTIONS', 'timers', {});
      return clock.now() ?? Date.now();
    },
    async request<T>(method: string, path: string, options: RequestOptions = {}) {
      return (await http.write<T>(method, path, options)).body;
    },
    async write<T>(method: string, path: string, options: RequestOptions = {}) {
      const { status, text, replayed } = await exchange(method, path, options);
      const body = parseJson(text);
      if (status >= 200 && status < 300) return { body: body as T, replayed };
      throw refusal(body, text, { status, url, withToken: !!token, key: options.key });
    },
  };
  /** One request and its answer, whatever its status; the clock notes the scheduler's now from it. */
  async function exchange(method: string, path: string, options: RequestOptions): Promise<Answer> {
    // checked here, not when built: repartition talks to Redis and never reads SUNDIAL_URL
    const base = baseUrl(url);
    const timeoutMs = waitBound(env, 'SUNDIAL_TIMEOUT_MS', DEFAULT_TIMEOUT_MS);
    const target = new URL(`${base}/v1/${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) target.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { ...options.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const sentAt = clock.local();
    let answer: Answer;
    try {
      const body = options.body === undefined ? undefined : JSON.stringify(options.body);
      answer = await send(target, { method, headers, body }, timeoutMs);
    } catch (error) {
      throw unreachable(url, error, { write: !READS.has(method), timeoutMs, key: options.key });
    }
    clock.note(answer.now, sentAt, clock.local());
    return answer;
  }
  return http;
}

/** Methods that change nothing: cut off, nothing may have been applied. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

function refusal(body: unknown, text: string, context: RefusalContext): CliError {
  const { status } = context;
  const error = (body as { error?: Partial<ErrorFields> } | null)?.error;
  const fields: ErrorFields = {
    reason: error?.reason ?? `http-${status}`,
    ...(error?.field !== undefined && { field: error.field }),
    message:
      (error && cliMessage(error)) ??
      error?.message ??
      (text.slice(0, 200) || `the scheduler answered ${status}`),
    fix:
      cliFix(error ?? {}, context) ??
      (status === 404
        ? 'Check SUNDIAL_URL points at a Sundial scheduler of this version.'
        : 'See the scheduler logs.'),
    ...(error?.detail !== undefined && { detail: error.detail }),
  };
  return new CliError(fields, status >= 500 ? EXIT.unavailable : EXIT.refused, status);
}

/** SUNDIAL_URL as a URL to send to: an http(s) address, else a bad command line that sends nothing. */
function baseUrl(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed?.protocol === 'http:' || parsed?.protocol === 'https:') return url;
  throw new CliError(
    {
      reason: 'invalid',
      field: 'SUNDIAL_URL',
      message: `SUNDIAL_URL ${JSON.stringify(url)} is not an http:// or https:// address`,
      fix: `Set SUNDIAL_URL to the scheduler's root, e.g. SUNDIAL_URL=${DEFAULT_URL}.`,
    },
    EXIT.usage,
  );
}

interface Attempt {
  /** a request that changes something: cut off after it was sent, it may have been applied */
  write: boolean;
  timeoutMs: number;
  key?: string;
}

/** No answer: nothing listening, a closed connection, or none within the timeout. */
function unreachable(url: string, error: unknown, { write, timeoutMs, key }: Attempt): CliError {
  if (error instanceof Error && error.name === 'TimeoutError') {
    const check = key === undefined ? 'sundial list' : `sundial get ${keyArgument(key)}`;
    return new CliError(
      {
        reason: 'unavailable',
        message:
          `the scheduler at ${url} did not answer within ${timeoutMs} ms` +
          (write ? ': the request was sent and may or may not have been applied' : ''),
        fix: write
          ? `Check with ${check}, or run the same command again with the same --idempotency-key (a repeat changes nothing more); see the scheduler's logs and its Redis.`
          : "See the scheduler's logs and its Redis (a scheduler waiting on an unresponsive Redis answers late), then retry; SUNDIAL_TIMEOUT_MS sets the wait.",
      },
      EXIT.unavailable,
    );
  }
  const cause =
    error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
  return new CliError(
    {
      reason: 'unavailable',
      message: `cannot reach the scheduler at ${url} (${cause})`,
      fix: 'Start the scheduler (npm start), or set SUNDIAL_URL to its address, e.g. SUNDIAL_URL=http://localhost:3000.',
    },
    EXIT.unavailable,
  );
}

/**
 * Path of a timer's route: keys are URL-encoded in paths. `.` and `..` cannot be (docs/spec.md §2): a URL
 * resolves them, `%2E%2E` too, to the route's parent, so the request went to another route and its answer
 * (404 "no such route", a fix naming SUNDIAL_URL) spoke of something else: refused here, nothing sent.
 */
export function timerPath(key: string, action?: string): string {
  if (key === '.' || key === '..') {
    throw usageError(
      `key ${JSON.stringify(key)} is a URL dot-segment: no HTTP route can name it`,
      'A timer key is never . or .. (refused when scheduled); use a key with a letter or digit, e.g. invoice:42:remind. A timer made under one before that rule is reachable from code only (get and cancel of the TimersApi).',
    );
  }
  return `timers/${encodeURIComponent(key)}${action ? `/${action}` : ''}`;
}
