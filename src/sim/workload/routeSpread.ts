/**
 * How far one token's routed copies spread: the chance that a token's k experts include at least one of a given set
 * (one GPU's experts, or one node's). A dispatch that sends a token once per GPU or once per node it reaches (DeepEP,
 * collectives/deepEpDispatch.ts) moves that many copies instead of k.
 *
 * Routing is taken as balanced: every expert equally likely. Group-limited routing (DeepSeek-V2 §2.2.2
 * "device-limited", DeepSeek-V3 §2.1.2 "node-limited"; Megatron --moe-router-num-groups / --moe-router-group-topk, HF
 * n_group / topk_group) first picks `groupsPerToken` of `groups` equal, contiguous groups of experts, then the k
 * experts among those groups' experts; without it there is one group.
 */
export interface ExpertRouting {
  experts: number;
  topK: number;
  /** Equal groups the experts are split into, in index order; 1: no group limit. */
  groups: number;
  /** Groups each token's experts are drawn from (≤ groups). */
  groupsPerToken: number;
}

/** C(a − s, k) / C(a, k): the chance that k draws without replacement from a items all miss s given ones. */
function missAll(a: number, s: number, k: number): number {
  if (s <= 0) return 1;
  if (a - s < k) return 0;
  let p = 1;
  for (let i = 0; i < k; i++) p *= (a - s - i) / (a - i);
  return p;
}

/**
 * The chance that a token's k experts include one of a set of experts, given as [first, count] ranges of indices, under
 * balanced routing.
 * Averages, over every equally likely choice of groups, the chance that the k draws all miss the set's experts inside
 * the chosen groups; the choices are counted by how many of the set's experts they hold (a subset-sum table).
 */
export function reachProbability(routing: ExpertRouting, ranges: readonly (readonly [number, number])[]): number {
  const { experts, topK, groups, groupsPerToken: m } = routing;
  const perGroup = experts / groups;
  const pool = m * perGroup;
  const count = ranges.reduce((sum, [, n]) => sum + n, 0);
  // ways[j][s]: the number of ways to choose j of the groups seen so far holding s of the set's experts.
  const ways = Array.from({ length: m + 1 }, () => new Float64Array(count + 1));
  ways[0][0] = 1;
  for (let g = 0; g < groups; g++) {
    const overlap = overlapWith(ranges, g * perGroup, (g + 1) * perGroup);
    for (let j = Math.min(m, g + 1); j >= 1; j--)
      for (let s = count; s >= overlap; s--) ways[j][s] += ways[j - 1][s - overlap];
  }
  let total = 0;
  let miss = 0;
  ways[m].forEach((w, s) => {
    total += w;
    miss += w * missAll(pool, s, topK);
  });
  return 1 - miss / total;
}

/** How many experts of the ranges lie in [lo, hi). */
function overlapWith(ranges: readonly (readonly [number, number])[], lo: number, hi: number): number {
  let n = 0;
  for (const [first, count] of ranges) n += Math.max(0, Math.min(first + count, hi) - Math.max(first, lo));
  return n;
}

/** Why a routing description is not one, or undefined when it is. */
export function routingProblem(routing: ExpertRouting): string | undefined {
  const { experts, topK, groups, groupsPerToken } = routing;
  if (!Number.isInteger(groups) || groups < 1 || experts % groups !== 0)
    return `the routing groups (${groups}) must divide the ${experts} experts`;
  if (!Number.isInteger(groupsPerToken) || groupsPerToken < 1 || groupsPerToken > groups)
    return `the groups a token reaches (${groupsPerToken}) must be between 1 and the ${groups} groups`;
  if (topK > groupsPerToken * (experts / groups))
    return `top-${topK} needs at least ${topK} experts in a token's ${groupsPerToken} group(s) of ${experts / groups}`;
  return undefined;
}
