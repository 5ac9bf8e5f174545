/** What the scheduler answered: its status, the headers the CLI reads and its body as text. */
export interface Answer {
  status: number;
  text: string;
  /** its `Sundial-Now` (server-clock.ts) */
  now: string | undefined;
  /** `Idempotent-Replayed: true`: the first answer of its Idempotency-Key given again (docs/spec.md §5.2) */
  replayed: boolean;
}

export interface Sent {
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * One request over node:http or node:https, its answer read whole. Given up `timeoutMs` after it
 * started (connecting included) with an error named TimeoutError, the request torn down. Not fetch:
 * its first call loads undici, ~0.1 s of CPU, about as much as the rest of an invocation together.
 */
export async function send(target: URL, { method, headers, body }: Sent, timeoutMs: number): Promise<Answer> {
  const { request } = target.protocol === 'https:' ? await import('node:https') : await import('node:http');
  let timer: NodeJS.Timeout | undefined;
  return new Promise<Answer>((resolve, reject) => {
    const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
    const sent = request(target, { method, headers: { ...headers, ...length } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
          now: response.headers['sundial-now'] as string | undefined,
          replayed: response.headers['idempotent-replayed'] === 'true',
        }),
      );
      response.on('error', reject);
    });
    sent.on('error', reject);
    timer = setTimeout(() => {
      const timeout = new Error(`no answer within ${timeoutMs} ms`);
      timeout.name = 'TimeoutError';
      reject(timeout);
      sent.destroy(timeout);
    }, timeoutMs);
    sent.end(body);
  }).finally(() => clearTimeout(timer));
}
