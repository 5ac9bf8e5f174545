import { normalizeSpec, type TimerSpec } from '@sundial/core';
import { encodeSpecFields } from './row';
import { scheduleArgs } from './schedule-args';

/** The specs of one schedule.lua call as sent (ARGV[5]) and the flags beside them (ARGV[6], ARGV[7]). */
function argsOf(...specs: TimerSpec[]) {
  const normalized = specs.map((spec) => normalizeSpec(spec));
  return scheduleArgs(
    normalized.map((_, i) => i),
    normalized,
    normalized.map((spec) => encodeSpecFields(spec)),
    Date.now(),
  );
}

describe('scheduleArgs', () => {
  const at = Date.now() + 3_600_000;

  it('sends a call of plain one-shots as key, at, h, p: 4 elements a spec', () => {
    expect(
      argsOf({ key: 'a', handler: 'h', at }, { key: 'b', handler: 'g', payload: { x: 1 }, at: at + 1 }),
    ).toEqual({
      specs: ['a', String(at), 'h', '', 'b', String(at + 1), 'g', '{"x":1}'],
      distinct: true,
      plain: true,
    });
  });

  it('sends every spec of a call in full when one is not plain', () => {
    for (const other of [
      { key: 'b', handler: 'h', at, ifExists: 'replace' as const },
      { key: 'b', handler: 'h', delay: '1h' as const },
      { key: 'b', handler: 'h', at, meta: { m: 1 } },
      { key: 'b', handler: 'h', every: '1h' as const },
    ]) {
      const args = argsOf({ key: 'a', handler: 'h', at }, other);
      expect(args.plain).toBe(false);
      expect(args.specs.slice(0, 7)).toEqual(['a', 'error', 'once', String(at), 'h', '', 0]);
    }
  });

  it('says whether a key is in the call twice', () => {
    expect(
      argsOf({ key: 'a', handler: 'h', at }, { key: 'a', handler: 'h', at, ifExists: 'keep' }).distinct,
    ).toBe(false);
    expect(argsOf({ key: 'a', handler: 'h', at }, { key: 'b', handler: 'h', at }).distinct).toBe(true);
  });
});
