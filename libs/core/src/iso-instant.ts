/** An ISO-8601 date-time: date, optional time, optional zone designator (`Z` or `±hh[:mm]`). */
const ISO_DATE_TIME = new RegExp(
  '^(?<year>\\d{4})-(?<month>\\d{2})-(?<day>\\d{2})' +
    '(?:T(?<hour>\\d{2}):(?<minute>\\d{2})(?::(?<second>\\d{2})(?:[.,](?<fraction>\\d+))?)?)?' +
    '(?<zone>Z|(?<sign>[+-])(?<offsetHours>\\d{2})(?::?(?<offsetMinutes>\\d{2}))?)?$',
  'i',
);

/**
 * Reads an ISO-8601 instant into epoch ms. An instant needs a zone: a text without `Z` or an offset
 * names a wall time, not a moment, and is reported as 'missing-zone'. Impossible dates such as
 * February 30 are 'malformed' (Date.parse would quietly roll them into March).
 */
export function parseIsoInstant(text: string): number | 'missing-zone' | 'malformed' {
  const parts = ISO_DATE_TIME.exec(text)?.groups;
  if (!parts) return 'malformed';
  if (!parts.zone) return 'missing-zone';
  if (!parts.hour) return 'malformed';
  const [year, month, day, hour, minute, second] = [
    parts.year,
    parts.month,
    parts.day,
    parts.hour,
    parts.minute,
    parts.second ?? '0',
  ].map(Number);
  const millisecond = Number((parts.fraction ?? '').slice(0, 3).padEnd(3, '0'));
  const wall = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millisecond));
  const rolledOver =
    wall.getUTCMonth() !== month - 1 ||
    wall.getUTCDate() !== day ||
    wall.getUTCHours() !== hour ||
    wall.getUTCMinutes() !== minute ||
    wall.getUTCSeconds() !== second;
  const [offsetHours, offsetMinutes] = [Number(parts.offsetHours ?? 0), Number(parts.offsetMinutes ?? 0)];
  if (rolledOver || offsetHours > 23 || offsetMinutes > 59) return 'malformed';
  const offsetMs = (parts.sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return wall.getTime() - offsetMs;
}
