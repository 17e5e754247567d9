/** What a node's link layout depends on besides the node preset: its PCIe switches, sockets and NVSwitch. */
export interface NodeShape {
  P: number;
  S: number;
  nvs: number;
  /** GB/s of one NVLink of a mesh: the node's NVLink bandwidth over the most links any GPU has. */
  perMeshLinkGBps: number;
}

/** The counts a node's block of link ids is made of: GPUs, NICs, PCIe switches, sockets, NVSwitch, mesh pairs. */
interface NodeCounts {
  nvs: number;
  G: number;
  meshPairs: number;
  P: number;
  S: number;
  N: number;
}

/**
 * How many links of each kind a node has, in the order `ClusterTopology.addNodeLinks` adds them (the object's key
 * order is that order): up and down to the NVSwitch, both ways of each mesh pair, GPU to PCIe switch and back, switch
 * to socket and back, the inter-socket pair, NIC to switch and back, NIC to leaf and back.
 */
function nodeLinkCounts(c: NodeCounts) {
  return {
    nvsUp: c.nvs * c.G,
    nvsDown: c.nvs * c.G,
    mesh: 2 * c.meshPairs,
    gpuUp: c.G,
    gpuDown: c.G,
    swUp: c.P,
    swDown: c.P,
    sock: c.S === 2 ? 2 : 0,
    nicUp: c.N,
    nicDown: c.N,
    netOut: c.N,
    netIn: c.N,
  };
}

/** The kinds of link in a node's block of link ids. */
export type NodeLinkKind = keyof ReturnType<typeof nodeLinkCounts>;

/**
 * The offset of each kind of link within a node's block of link ids, in the order the links are added, and the
 * links per node.
 */
export function nodeLinkLayout(c: NodeCounts): { offsets: Record<NodeLinkKind, number>; linksPerNode: number } {
  const offsets = {} as Record<NodeLinkKind, number>;
  let off = 0;
  for (const [kind, n] of Object.entries(nodeLinkCounts(c))) {
    offsets[kind as NodeLinkKind] = off;
    off += n;
  }
  return { offsets, linksPerNode: off };
}
