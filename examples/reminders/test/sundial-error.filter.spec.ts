import type { ArgumentsHost } from '@nestjs/common';
import { SundialError, type SundialErrorReason } from '@sundial/core';
import { SundialErrorFilter } from '../src/sundial-error.filter';

/** What the filter writes to the response for a refusal with `reason`. */
function answer(reason: SundialErrorReason): { status: number; body: unknown } {
  const sent = { status: 0, body: undefined as unknown };
  const response = {
    status: (code: number) => {
      sent.status = code;
      return { json: (body: unknown) => (sent.body = body) };
    },
  };
  const host = { switchToHttp: () => ({ getResponse: () => response }) } as unknown as ArgumentsHost;
  new SundialErrorFilter().catch(new SundialError({ reason, message: 'm', fix: 'f' }), host);
  return sent;
}

describe("examples/reminders' SundialErrorFilter", () => {
  // The status of every refusal of docs/spec.md §2, as apps/scheduler answers them.
  it.each([
    ['invalid', 400],
    ['payload-too-large', 413],
    ['duplicate-key', 409],
    ['not-found', 404],
    ['inactive', 409],
    ['unauthorized', 401],
    ['disposed', 503],
    ['unavailable', 503],
    ['idempotency-conflict', 422],
  ] as const)('answers %s with %i and the error body', (reason, status) => {
    expect(answer(reason)).toEqual({ status, body: { error: { reason, message: 'm', fix: 'f' } } });
  });
});
