import { table } from './output';

/** One due time of `next` and `preview`: the instant, and the zone's offset at it. */
export interface DueTime {
  at: string;
  offset: string;
}

export function timesTable(times: DueTime[], none: string): string {
  return times.length
    ? table(
        ['#', 'AT', 'OFFSET'],
        times.map((t, i) => [String(i + 1), t.at, t.offset]),
      )
    : none;
}
