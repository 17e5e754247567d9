import type { NodeSpec } from '../hardware/types.js';
import { traitsOf } from '../hardware/architectures.js';

const cache = new WeakMap<NodeSpec, Map<string, number[][]>>();

/**
 * The rings NCCL can lay over one node's members. On an NVLink mesh (DGX-1's hybrid cube-mesh) NCCL
 * builds rings only over GPU pairs joined by NVLink and uses every link, so this finds as many
 * link-disjoint Hamiltonian cycles as the links allow (a pair with two NVLinks can serve two rings);
 * each ring is then run in both directions by separate channels. RCCL on a fully connected Infinity Fabric mesh
 * (AMD's 8-GPU platforms) instead runs fixed rings that load every link alike (rccl src/graph/rome_models.cc: 14
 * Hamiltonian rings over the 28 links of 8 MI300X, each listed twice), so that all 7 links of a GPU carry the
 * all-reduce (AMD's RCCL blog, 2025: 8-GPU bus bandwidth 7 × the slowest link): `evenRingCover`. Elsewhere there is
 * one ring, the members in order.
 */
export function nodeRings(node: NodeSpec, members: number[]): number[][] {
  if (node.intra !== 'nvlink-mesh' || !node.nvlinkMesh || members.length < 3) return [members];
  let byKey = cache.get(node);
  if (!byKey) cache.set(node, (byKey = new Map()));
  const key = members.join(',');
  const hit = byKey.get(key);
  if (hit) return hit;
  const gpn = node.gpusPerNode;
  const k = members.length;
  const capacity = new Int32Array(k * k);
  for (const { a, b, links } of node.nvlinkMesh) {
    const ia = members.findIndex((g) => g % gpn === a);
    const ib = members.findIndex((g) => g % gpn === b);
    if (ia >= 0 && ib >= 0) {
      capacity[ia * k + ib] += links;
      capacity[ib * k + ia] += links;
    }
  }
  const even = traitsOf(node.gpu).collectiveLibrary === 'RCCL' && k % 2 === 0 && isComplete(k, capacity);
  const cycles = even ? evenRingCover(k, capacity) : mostDisjointCycles(k, capacity);
  const rings = cycles.map((cycle) => cycle.map((j) => members[j]));
  const result = rings.length > 0 ? rings : [members];
  byKey.set(key, result);
  return result;
}

/**
 * Every Hamiltonian cycle over vertices 0..k−1 with capacity on each edge, once per direction pair: at most 2,520 (a
 * complete mesh of 8), as meshes are held to 8 GPUs (clusterSpecChecks.ts `MAX_MESH_GPUS`).
 */
function allCycles(k: number, capacity: Int32Array): number[][] {
  const cycles: number[][] = [];
  const used = new Array<boolean>(k).fill(false);
  const path = [0];
  used[0] = true;
  const extend = (): void => {
    const last = path[path.length - 1];
    if (path.length === k) {
      if (capacity[last * k] > 0 && path[1] < last) cycles.push([...path]);
      return;
    }
    for (let j = 1; j < k; j++) {
      if (used[j] || capacity[last * k + j] === 0) continue;
      used[j] = true;
      path.push(j);
      extend();
      path.pop();
      used[j] = false;
    }
  };
  extend();
  return cycles;
}

/**
 * The largest set of Hamiltonian cycles whose use of each vertex pair stays within its link count. A cycle takes two
 * links at every vertex, so no set is larger than half the fewest links a vertex has; the search stops there.
 */
function mostDisjointCycles(k: number, capacity: Int32Array): number[][] {
  const cycles = allCycles(k, capacity);
  let bound = Infinity;
  for (let v = 0; v < k; v++) {
    let degree = 0;
    for (let j = 0; j < k; j++) degree += capacity[v * k + j];
    bound = Math.min(bound, Math.floor(degree / 2));
  }
  const left = Int32Array.from(capacity);
  let best: number[][] = [];
  const chosen: number[][] = [];
  const fits = (c: number[]) => c.every((x, i) => left[x * k + c[(i + 1) % k]] > 0);
  const take = (c: number[], d: number) =>
    c.forEach((x, i) => {
      const y = c[(i + 1) % k];
      left[x * k + y] -= d;
      left[y * k + x] -= d;
    });
  const search = (from: number): void => {
    if (chosen.length > best.length) best = [...chosen];
    for (let i = from; i < cycles.length && best.length < bound; i++) {
      if (!fits(cycles[i])) continue;
      take(cycles[i], 1);
      chosen.push(cycles[i]);
      search(i + 1);
      chosen.pop();
      take(cycles[i], -1);
    }
  };
  search(0);
  return best;
}

/** Every pair of the k vertices is joined, by the same number of links. */
function isComplete(k: number, capacity: Int32Array): boolean {
  const links = capacity[1];
  for (let a = 0; a < k; a++) for (let b = a + 1; b < k; b++) if (capacity[a * k + b] !== links) return false;
  return links > 0;
}

/**
 * Hamiltonian cycles of a complete graph on an even number k of vertices that use every edge equally: the complete
 * graph less one perfect matching splits into (k − 2)/2 edge-disjoint Hamiltonian cycles, and over the k − 1 matchings
 * of a round-robin 1-factorisation each edge is left out exactly once, so each is used k − 2 times. Run both ways, the
 * (k − 1)(k − 2) channels then keep all k − 1 links of every vertex equally busy.
 */
function evenRingCover(k: number, capacity: Int32Array): number[][] {
  const rings: number[][] = [];
  for (let round = 0; round < k - 1; round++) {
    const without = Int32Array.from(capacity);
    for (const [a, b] of roundRobinMatching(k, round)) without[a * k + b] = without[b * k + a] = 0;
    rings.push(...mostDisjointCycles(k, without));
  }
  return rings;
}

/** Round `round` of the circle method's 1-factorisation of k (even) vertices: k − 1 fixed, the rest turning. */
function roundRobinMatching(k: number, round: number): [number, number][] {
  const m = k - 1;
  const pairs: [number, number][] = [[round, m]];
  for (let j = 1; j < k / 2; j++) pairs.push([(round + j) % m, (round - j + m) % m]);
  return pairs;
}
