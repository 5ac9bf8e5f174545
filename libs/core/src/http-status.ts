import type { SundialErrorReason } from './errors';

/**
 * The HTTP status that answers each refusal (docs/spec.md §2): what apps/scheduler answers, and what an
 * application that puts its own routes in front of `Timers` can answer too (`SundialErrorFilter` of
 * @sundial/client). The run-failure reasons (`unknown-handler`, `forbidden-target`, `lost`) are never
 * refusals, so they have none.
 */
export const SUNDIAL_HTTP_STATUS: Readonly<Partial<Record<SundialErrorReason, number>>> = {
  invalid: 400,
  'payload-too-large': 413,
  'duplicate-key': 409,
  'not-found': 404,
  inactive: 409,
  unauthorized: 401,
  forbidden: 403,
  disposed: 503,
  unavailable: 503,
  'idempotency-conflict': 422,
};
