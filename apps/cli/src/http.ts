import { CliError, EXIT, type ErrorFields } from './cli-error';
import { cliFix, type RefusalContext } from './cli-fix';

/** The scheduler's HTTP API (docs/spec.md §5.2) at SUNDIAL_URL, with SUNDIAL_TOKEN as the bearer token. */
export interface SundialHttp {
  readonly url: string;
  request<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** the timer the request is about: a refusal's fix names it in the command to run */
  key?: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:3000';

export function sundialHttp(env: NodeJS.ProcessEnv = process.env): SundialHttp {
  const url = (env.SUNDIAL_URL?.trim() || DEFAULT_URL).replace(/\/+$/, '');
  const token = env.SUNDIAL_TOKEN?.trim();
  return {
    url,
    async request<T>(method: string, path: string, options: RequestOptions = {}) {
      const target = new URL(`${url}/v1/${path}`);
      for (const [name, value] of Object.entries(options.query ?? {})) {
        if (value !== undefined) target.searchParams.set(name, String(value));
      }
      const headers: Record<string, string> = { ...options.headers };
      if (token) headers.authorization = `Bearer ${token}`;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      let response: Response;
      try {
        response = await fetch(target, {
          method,
          headers,
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
        });
      } catch (error) {
        throw unreachable(url, error);
      }
      const text = await response.text();
      const body = parseJson(text);
      if (response.ok) return body as T;
      throw refusal(body, text, { status: response.status, url, withToken: !!token, key: options.key });
    },
  };
}

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
    message: error?.message ?? (text.slice(0, 200) || `the scheduler answered ${status}`),
    fix:
      cliFix(error ?? {}, context) ??
      (status === 404
        ? 'Check SUNDIAL_URL points at a Sundial scheduler of this version.'
        : 'See the scheduler logs.'),
    ...(error?.detail !== undefined && { detail: error.detail }),
  };
  return new CliError(fields, status >= 500 ? EXIT.unavailable : EXIT.refused, status);
}

function unreachable(url: string, error: unknown): CliError {
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

/** Path of a timer's route: keys are URL-encoded in paths. */
export function timerPath(key: string, action?: string): string {
  return `timers/${encodeURIComponent(key)}${action ? `/${action}` : ''}`;
}
