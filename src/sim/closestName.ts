/**
 * Edit distance (optimal string alignment: insertions, deletions, substitutions and swaps of neighbours), to suggest
 * the name a typo meant.
 */
function distance(a: string, b: string): number {
  // d[i][j]: the distance between a's first i and b's first j characters.
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The allowed name closest to `name` (ignoring case), if it is close enough to be a typo. */
export function closest(name: string, allowed: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const a of allowed) {
    const d = a.toLowerCase() === lower ? 0 : distance(lower, a.toLowerCase());
    if (d < bestD) [best, bestD] = [a, d];
  }
  return best !== undefined && bestD <= Math.max(1, Math.min(3, Math.floor(name.length / 3))) ? best : undefined;
}
