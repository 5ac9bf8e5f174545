import type { NextTime } from '@sundial/core';
import { table } from './output';

export function timesTable(times: NextTime[], none: string): string {
  return times.length
    ? table(
        ['#', 'AT', 'OFFSET'],
        times.map((t, i) => [String(i + 1), t.at, t.offset]),
      )
    : none;
}
