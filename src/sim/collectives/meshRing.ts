import type { NodeSpec } from '../hardware/types.js';

const cache = new WeakMap<NodeSpec, Map<string, number[][]>>();

/**
 * The rings NCCL can lay over one node's members. On an NVLink mesh (DGX-1's hybrid cube-mesh) NCCL
 * builds rings only over GPU pairs joined by NVLink and uses every link, so this finds as many
 * link-disjoint Hamiltonian cycles as the links allow (a pair with two NVLinks can serve two rings);
 * each ring is then run in both directions by separate channels. Elsewhere there is one ring, the
 * members in order.
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
  const rings = mostDisjointCycles(k, capacity).map((cycle) => cycle.map((j) => members[j]));
  const result = rings.length > 0 ? rings : [members];
  byKey.set(key, result);
  return result;
}

/** Every Hamiltonian cycle over vertices 0..k−1 with capacity on each edge, once per direction pair. */
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

/** The largest set of Hamiltonian cycles whose use of each vertex pair stays within its link count. */
function mostDisjointCycles(k: number, capacity: Int32Array): number[][] {
  const cycles = allCycles(k, capacity);
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
    for (let i = from; i < cycles.length && best.length < k; i++) {
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
