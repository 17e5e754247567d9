/** Edit distance (Levenshtein), to suggest the name a typo meant. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length];
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
