/** How a group of GPU ranks falls on nodes. */
export interface GroupLayout {
  /** Node indices in order of first appearance in the group. */
  nodes: number[];
  /** The group's GPUs on each of those nodes, in group order. */
  members: number[][];
  /** Largest number of group members on one node. */
  maxPerNode: number;
}

/** Splits a group of global GPU ranks by node (GPU g is on node floor(g / gpusPerNode)). */
export function groupLayout(group: ArrayLike<number>, gpusPerNode: number): GroupLayout {
  const index = new Map<number, number>();
  const nodes: number[] = [];
  const members: number[][] = [];
  for (let i = 0; i < group.length; i++) {
    const g = group[i];
    const node = Math.floor(g / gpusPerNode);
    let j = index.get(node);
    if (j === undefined) {
      j = nodes.length;
      index.set(node, j);
      nodes.push(node);
      members.push([]);
    }
    members[j].push(g);
  }
  let maxPerNode = 0;
  for (const m of members) maxPerNode = Math.max(maxPerNode, m.length);
  return { nodes, members, maxPerNode };
}

/**
 * The ring NCCL channel `channel` follows: nodes in order, and inside each node the members rotated
 * by the channel number, so each channel enters a node at a different GPU (and so uses a different NIC).
 */
export function ringOrder(layout: GroupLayout, channel: number): number[] {
  const order: number[] = [];
  for (const m of layout.members) {
    const k = m.length;
    const r = channel % k;
    for (let i = 0; i < k; i++) order.push(m[(i + r) % k]);
  }
  return order;
}
