import type { ArgumentsHost } from '@nestjs/common';
import { refusals } from '@sundial/core';
import { HTTP_OUTCOME_UNKNOWN_FIX, HttpErrorFilter } from './http-error.filter';

/** What HttpErrorFilter answers `exception` for a POST /v1/timers: its status and body. */
function answer(exception: unknown): { status: number; body: { error: { fix: string } } } {
  const seen = { status: 0, body: undefined as unknown };
  const response = {
    status: (status: number) => ({
      json: (body: unknown) => void Object.assign(seen, { status, body }),
    }),
    setHeader: () => undefined,
  };
  const request = { method: 'POST', url: '/v1/timers', headers: {}, params: {} };
  const host = { switchToHttp: () => ({ getRequest: () => request, getResponse: () => response }) };
  const logger = {
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
    debug: () => undefined,
  };
  new HttpErrorFilter(logger).catch(exception, host as unknown as ArgumentsHost);
  return seen as { status: number; body: { error: { fix: string } } };
}

describe('the fix of a write cut off in flight (unavailable, outcome-unknown), per surface', () => {
  const cutOff = refusals.outcomeUnknown(new Error('Connection is closed.'));

  it("names the call's requestId option in process, not an HTTP header its caller has none of", () => {
    // Before: `Timers`/`RedisTimers` callers were told of the Idempotency-Key header.
    expect(cutOff.fix).toMatch(/^Retry with the same requestId option: /);
    expect(cutOff.fix).not.toMatch(/Idempotency-Key|HTTP/);
  });

  it('names the Idempotency-Key header over HTTP, as it did', () => {
    const { status, body } = answer(cutOff);
    expect(status).toBe(503);
    expect(body.error.fix).toBe(HTTP_OUTCOME_UNKNOWN_FIX);
    expect(body.error.fix).toMatch(/the same Idempotency-Key header/);
  });
});
