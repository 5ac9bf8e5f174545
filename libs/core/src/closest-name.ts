/**
 * The candidate closest to `input` by edit distance (case-insensitive, a swap of two neighbouring
 * letters counts as one edit), or null when none is close enough to be a plausible typo.
 */
export function closestName(input: string, candidates: readonly string[]): string | null {
  const wanted = input.toLowerCase();
  const tolerance = Math.max(2, Math.floor(wanted.length / 3));
  let best: string | null = null;
  let bestDistance = tolerance + 1;
  for (const candidate of candidates) {
    // Lengths further apart than the tolerance cannot be close; skipping them bounds the work for long inputs.
    if (Math.abs(candidate.length - wanted.length) > tolerance) continue;
    const distance = editDistance(wanted, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent swaps. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
      }
    }
  }
  return rows[a.length][b.length];
}
