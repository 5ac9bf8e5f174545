import type { CancelOutcome } from '@sundial/core';

/**
 * cancel.lua's reply: 1, a live timer cancelled; 'completed' or 'failed', the status of the kept finished
 * row it removed; 0, no row. A release before this one reads only 1 as cancelled: to it a removed row
 * answers `false`, as it always did.
 */
export function parseCancelReply(reply: unknown): CancelOutcome {
  if (reply === 1) return 'cancelled';
  return reply === 'completed' || reply === 'failed' ? reply : null;
}
