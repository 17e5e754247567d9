/** The kinds of link in a node's block of link ids, in the order a node's links are added. */
export type NodeLinkKind =
  | 'nvsUp'
  | 'nvsDown'
  | 'mesh'
  | 'gpuUp'
  | 'gpuDown'
  | 'swUp'
  | 'swDown'
  | 'sock'
  | 'nicUp'
  | 'nicDown'
  | 'netOut'
  | 'netIn';

/** What a node's link layout depends on besides the node preset: its PCIe switches, sockets and NVSwitch. */
export interface NodeShape {
  P: number;
  S: number;
  nvs: number;
  /** GB/s of one NVLink of a mesh: the node's NVLink bandwidth over the most links any GPU has. */
  perMeshLinkGBps: number;
}

/**
 * Sets the offsets of each kind of link within a node's block of link ids, in the order the links are added
 * (`ClusterTopology.addNodeLinks`), and returns the links per node.
 */
export function layOutNodeLinks(
  o: Record<
    | 'nvsUp'
    | 'nvsDown'
    | 'mesh'
    | 'gpuUp'
    | 'gpuDown'
    | 'swUp'
    | 'swDown'
    | 'sock'
    | 'nicUp'
    | 'nicDown'
    | 'netOut'
    | 'netIn',
    number
  >,
  c: { nvs: number; G: number; meshPairs: number; P: number; S: number; N: number },
): number {
  const sizes: [keyof typeof o, number][] = [
    ['nvsUp', c.nvs * c.G],
    ['nvsDown', c.nvs * c.G],
    ['mesh', 2 * c.meshPairs],
    ['gpuUp', c.G],
    ['gpuDown', c.G],
    ['swUp', c.P],
    ['swDown', c.P],
    ['sock', c.S === 2 ? 2 : 0],
    ['nicUp', c.N],
    ['nicDown', c.N],
    ['netOut', c.N],
    ['netIn', c.N],
  ];
  let off = 0;
  for (const [k, n] of sizes) {
    o[k] = off;
    off += n;
  }
  return off;
}
