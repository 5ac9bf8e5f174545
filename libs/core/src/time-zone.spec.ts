import { isTimeZone, MAX_ZONE_FORMATTERS, zoneFormattersHeld, zoneOffset } from './time-zone';

/** The first `count` case spellings of `name` (every one a zone to Intl). */
function spellings(name: string, count: number): string[] {
  return Array.from({ length: count }, (_, n) => {
    let bit = 0;
    return name.replace(/[a-z]/g, (c) => ((n >> bit++) & 1 ? c.toUpperCase() : c));
  });
}

describe('zone formatters', () => {
  // A tz field is the caller's text: each spelling Intl takes was a formatter (~23 KB of ICU memory) kept
  // for the process's life, so an API fed many spellings grew without bound.
  it('keeps at most MAX_ZONE_FORMATTERS, whatever spellings of a zone callers send', () => {
    const names = spellings('america/los_angeles', MAX_ZONE_FORMATTERS + 500);
    expect(new Set(names).size).toBe(names.length);
    for (const tz of names) expect(isTimeZone(tz)).toBe(true);
    expect(zoneFormattersHeld()).toBeLessThanOrEqual(MAX_ZONE_FORMATTERS);
    // a dropped one is made again when asked for: the answers stay the zone's
    const winter = Date.UTC(2026, 0, 15);
    expect(zoneOffset(names[0], winter, false)).toBe(-8 * 3_600_000);
    expect(zoneOffset('America/Los_Angeles', winter, false)).toBe(-8 * 3_600_000);
  });
});
