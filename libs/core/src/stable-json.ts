/**
 * JSON with object keys sorted (fields left undefined left out), so that two values that say the same
 * thing in another order give the same text: what a declarative source's row hashes are taken of (the
 * schedules file's `sundialRow`, the registrar's declaration set). A value with `toJSON` (a Date) is
 * written as that gives it.
 */
export function stableJson(value: unknown): string {
  if (value instanceof Date) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
