/**
 * Textbook max-min fairness for the network tests, written independently of the solver: repeatedly find
 * the smallest fair share over links and rate caps, and fix every flow that share binds. O(n²·L), fine
 * for small cases.
 */
export function referenceRates(capacities: number[], flows: readonly { links: number[]; cap?: number }[]): number[] {
  const rate = flows.map(() => -1);
  const capLeft = capacities.slice();
  const capOf = (i: number) => flows[i].cap ?? Infinity;
  for (;;) {
    const open = flows.map((_, i) => i).filter((i) => rate[i] < 0);
    if (open.length === 0) return rate;
    const users = capacities.map((_, l) => open.filter((i) => flows[i].links.includes(l)).length);
    let level = Infinity;
    for (let l = 0; l < capacities.length; l++) if (users[l] > 0) level = Math.min(level, capLeft[l] / users[l]);
    for (const i of open) level = Math.min(level, capOf(i));
    const fixed = open.filter(
      (i) =>
        capOf(i) <= level * (1 + 1e-12) ||
        flows[i].links.some((l) => users[l] > 0 && capLeft[l] / users[l] <= level * (1 + 1e-12)),
    );
    for (const i of fixed) {
      rate[i] = level;
      for (const l of flows[i].links) capLeft[l] -= level;
    }
  }
}
