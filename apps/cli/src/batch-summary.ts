import type { Timer } from '@sundial/core';

/**
 * The line under a batch's table (`schedule --file batch.json`): how many timers it answered, and how many
 * of them a later spec of the batch replaced (a key named again with `ifExists: 'replace'`: the API
 * answers the earlier timer cancelled, docs/spec.md §3.1), so the count does not read as that many live.
 */
export function batchSummary(items: Timer[]): string {
  const replaced = items.filter((timer, i) =>
    items.slice(i + 1).some((later) => later.key === timer.key && later.id !== timer.id),
  ).length;
  const count = `${items.length} timer(s) scheduled`;
  return replaced
    ? `${count}, ${replaced} of them replaced by a later spec of this batch (cancelled)`
    : count;
}
