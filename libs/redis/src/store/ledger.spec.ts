/* The one TS reader of a stored ledger entry (docs/design.md "Ledger"): entries of every age read alike. */
import { decodeLedgerEntry } from './ledger';

const at = Date.parse('2026-12-06T12:00:00Z');

describe('decodeLedgerEntry', () => {
  it("a failed run that ended its timer: its error's reason and message, and why it ended (`x`)", () => {
    const text = JSON.stringify({
      a: at,
      e: 'failed',
      v: 3,
      r: 'timeout',
      m: 'too slow',
      n: 1,
      d: at,
      x: 'ended',
    });
    expect(decodeLedgerEntry(text)).toEqual({
      at: '2026-12-06T12:00:00.000Z',
      event: 'failed',
      version: 3,
      reason: 'timeout',
      message: 'too slow',
      attempt: 1,
      due: '2026-12-06T12:00:00.000Z',
      ended: 'ended',
    });
  });

  it('an entry written before `x` was recorded reads as it always did, with no ended', () => {
    const failed = JSON.stringify({ a: at, e: 'failed', v: 3, r: 'no-next-slot', m: 'boom', n: 1 });
    expect(decodeLedgerEntry(failed)).toEqual({
      at: '2026-12-06T12:00:00.000Z',
      event: 'failed',
      version: 3,
      reason: 'no-next-slot',
      message: 'boom',
      attempt: 1,
    });
    const completed = JSON.stringify({ a: at, e: 'completed', v: 2, r: 'ended', d: at });
    expect(decodeLedgerEntry(completed)).toEqual({
      at: '2026-12-06T12:00:00.000Z',
      event: 'completed',
      version: 2,
      reason: 'ended',
      due: '2026-12-06T12:00:00.000Z',
    });
  });
});
