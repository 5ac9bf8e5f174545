/**
 * What one error listener of a BullMQ connection logged through an outage (@sundial/redis
 * error-throttle.ts): the lines of `source` (`Sundial dispatcher queue`, …), sorted by kind. A quiet one
 * has a `first`, no `others` (per-attempt lines), a few `stillFailing`, and `recovered`.
 */
export interface OutageLines {
  first: string | undefined;
  stillFailing: string[];
  recovered: string | undefined;
  others: string[];
}

export function outageLines(lines: readonly string[], source: string): OutageLines {
  const [first, ...rest] = lines.filter((line) => line.startsWith(`${source}: `));
  const stillFailing = rest.filter((line) =>
    /: still failing, [1-9]\d* errors not logged in \d+ ms; the last: /.test(line),
  );
  const again = /: connected again( \(\d+ errors not logged since the last line\))?$/;
  const recovered = rest.at(-1) !== undefined && again.test(rest.at(-1)!) ? rest.at(-1) : undefined;
  const others = rest.filter((line) => !stillFailing.includes(line) && line !== recovered);
  return { first, stillFailing, recovered, others };
}

/** Whether `source` logged that its connection answers again. */
export function outageRecovered(lines: readonly string[], source: string): boolean {
  return lines.some((line) => line.startsWith(`${source}: connected again`));
}
