import { createHash } from 'node:crypto';
import { stableJson, type TimerSpec } from '@sundial/core';

/**
 * What a replica's registrar declares, as one name: the sha1 (hex) of every row it writes — key and spec,
 * as sync compares them — in key order, each object's fields sorted. Two builds that declare the same
 * rows have the same set; one that adds, removes or changes a row has another (docs/spec.md §5.1).
 */
export function declarationSetHash(specs: readonly TimerSpec[]): string {
  const rows = [...specs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return createHash('sha1').update(stableJson(rows)).digest('hex');
}
