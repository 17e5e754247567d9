import type { CollectiveOp, Protocol } from './types.js';
import type { GpuSpec } from '../hardware/types.js';
import { traitsOf, type NcclGeneration } from '../hardware/architectures.js';

/**
 * NCCL's own cost model constants, read from NCCL's `src/graph/tuning.cc` (tags v2.19.3-1 to
 * v2.23.4-1). NCCL uses them to pick an algorithm and protocol; we use them for the latency part of
 * a collective, while bandwidth comes from the flows on the simulated links.
 */

/** Which hardware a hop crosses, as tuning.cc classifies it. */
export type HopKind = 'nvlink' | 'pci' | 'net';

const PROTO_INDEX: Record<Protocol, number> = { LL: 0, LL128: 1, Simple: 2 };

/** baseLat[algorithm][protocol] in µs (tuning.cc, v2.23.4: Tree Simple 8.4, Ring LL 6.6 / LL128 14 / Simple 8.4). */
const BASE_LAT_US: Record<'ring' | 'tree' | 'nvls', number[]> = {
  tree: [6.8, 14.0, 8.4],
  ring: [6.6, 14.0, 8.4],
  nvls: [0, 0, 0],
};

/** hwLat[hw][algorithm][protocol] in µs (tuning.cc, v2.23.4). NVLS is Simple only. */
const HW_LAT_US: Record<HopKind, Record<'ring' | 'tree' | 'nvls', number[]>> = {
  nvlink: { tree: [0.6, 1.25, 4.0], ring: [0.6, 1.9, 3.4], nvls: [0, 0, 25] },
  pci: { tree: [1.0, 1.9, 4.0], ring: [1.0, 2.5, 5.7], nvls: [0, 0, 0] },
  net: { tree: [5.0, 8.5, 14], ring: [2.7, 4.0, 14.0], nvls: [0, 0, 18] },
};

export function baseLatencyUs(algorithm: 'ring' | 'tree' | 'nvls', protocol: Protocol): number {
  return BASE_LAT_US[algorithm][PROTO_INDEX[protocol]];
}

export function hopLatencyUs(hop: HopKind, algorithm: 'ring' | 'tree' | 'nvls', protocol: Protocol): number {
  return HW_LAT_US[hop][algorithm][PROTO_INDEX[protocol]];
}

/**
 * Fraction of a link's bandwidth that carries payload under each protocol (tuning.cc): LL sends a
 * 4-byte flag with every 4 bytes of data (0.5); LL128 keeps 120 of every 128 bytes (NCCL uses 0.92
 * when GPUs per node ≥ 2, 0.7 for one GPU per node before v2.23); Simple carries data only.
 */
export function protocolEfficiency(protocol: Protocol, gpusPerNodeInGroup: number): number {
  if (protocol === 'LL') return 0.5;
  if (protocol === 'LL128') return gpusPerNodeInGroup >= 2 ? 0.92 : 0.7;
  return 1;
}

/** GPU generation, for NCCL's per-architecture bandwidth caps (architectures.ts says which a GPU is). */
export type GpuGeneration = NcclGeneration;

/**
 * llMaxBws (GB/s): the cap NCCL puts on the LL protocol's bus bandwidth, by GPU generation and by
 * node count (1, 2, more) — tuning.cc v2.21–v2.23; Blackwell's row (2× Hopper's) from v2.24 on.
 */
const LL_MAX_BUS_GBPS: Record<GpuGeneration, [number, number, number]> = {
  volta: [39.0, 39.0, 20.4],
  ampere: [87.7, 22.5, 19.0],
  hopper: [141.0, 45.0, 35.0],
  blackwell: [282.0, 90.0, 70.0],
};

export function llMaxBusBandwidthGBps(gen: GpuGeneration, nodes: number): number {
  const row = LL_MAX_BUS_GBPS[gen];
  return nodes <= 1 ? row[0] : nodes === 2 ? row[1] : row[2];
}

/** The tuning row `gpu` is timed with: its architecture's (architectures.ts). */
export function gpuGeneration(gpu: GpuSpec): GpuGeneration {
  return traitsOf(gpu).ncclGeneration;
}

/** Shape of a collective for the latency formulas. */
export interface LatencyShape {
  op: CollectiveOp;
  ranks: number;
  nodes: number;
  /** Hop kind inside a node (NVLink or PCIe). */
  intraHop: HopKind;
}

/**
 * Total latency term of one collective in µs, composed as NCCL's tuning.cc does (v2.23.4):
 * ring: base + (nsteps − nInter)·intra + nInter·inter, nsteps = 2(n−1) for all-reduce and n−1 for
 * all-gather / reduce-scatter / broadcast, nInter = 2(nodes−1) or nodes−1;
 * tree (all-reduce): base + 2·((ranks/nodes − 1)·intra + ⌊log2(nodes)⌋·inter);
 * nvls: intra (+ inter across nodes). With one rank per node (ppn 1) the inter hops take the tree's network latency.
 */
export function collectiveLatencyUs(algorithm: 'ring' | 'tree' | 'nvls', protocol: Protocol, s: LatencyShape): number {
  const n = s.ranks;
  if (n <= 1) return 0;
  if (algorithm === 'nvls') {
    return hopLatencyUs('nvlink', 'nvls', protocol) + (s.nodes > 1 ? hopLatencyUs('net', 'nvls', protocol) : 0);
  }
  const intra = hopLatencyUs(s.intraHop, algorithm, protocol);
  // tuning.cc (v2.23+): "With ppn=1 latencies are fully exposed, use the Tree network latency".
  const inter = hopLatencyUs('net', n === s.nodes ? 'tree' : algorithm, protocol);
  const base = baseLatencyUs(algorithm, protocol);
  if (algorithm === 'tree') {
    // tuning.cc divides in integers (nRanks/nNodes) and takes log2i, the integer (floor) log2 of the node count.
    const perNode = Math.floor(n / s.nodes);
    return base + 2 * ((perNode - 1) * intra + Math.floor(Math.log2(s.nodes)) * inter);
  }
  const allReduce = s.op === 'all_reduce';
  const nsteps = allReduce ? 2 * (n - 1) : n - 1;
  const nInter = s.nodes > 1 ? (allReduce ? 2 * (s.nodes - 1) : s.nodes - 1) : 0;
  return base + (nsteps - nInter) * intra + nInter * inter;
}

/**
 * tuning.cc multiplies the latency of a multi-node Simple ring all-reduce by 1.4 on sm80 and newer
 * (1.9 before) once each channel's chunk per rank is at least 64 bytes: the "plateau" of the pipelined ring.
 */
export function ringSimplePlateauFactor(gen: GpuGeneration): number {
  return gen === 'volta' ? 1.9 : 1.4;
}

/**
 * treeCorrectionFactor[protocol][log2(bytes / 64)] (tuning.cc, "trees are not perfectly sticking to the
 * model for medium sizes"): NCCL lowers a tree all-reduce's modelled bandwidth by these factors for
 * 64 B … 256 MiB; 1 outside that range.
 */
const TREE_CORRECTION: number[][] = [
  [1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0],
  [1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0],
  [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9],
];

export function treeCorrectionFactor(protocol: Protocol, bytes: number): number {
  const logSize = bytes >= 64 ? Math.floor(Math.log2(Math.floor(bytes / 64))) : -1;
  return logSize >= 0 && logSize < 23 ? TREE_CORRECTION[PROTO_INDEX[protocol]][logSize] : 1;
}

/**
 * The all-reduce bandwidth NCCL's tuning model assigns to the tree, in bytes per ns of payload, from the
 * bus bandwidth `ringBusBytesPerNs` that its ring reaches with the Simple protocol on the same channels
 * (tuning.cc: both start from nChannels × the graph's bandwidth; the tree then takes 92% of it, ×1/3.8
 * for LL (capped at llMaxBw), ×120/128 for LL128 across nodes, 7/9 inside one; and converts bus to
 * algorithm bandwidth by ×0.5, where the ring uses n/(2(n−1)); medium sizes get the correction factor).
 * NCCL picks its algorithm by this model, not by what the tree really reaches: across two nodes a
 * double binary tree could carry nearly twice the ring's bandwidth, yet NCCL's model rates it
 * below the ring for large messages, so large all-reduces run as rings.
 */
export function treeModelBytesPerNs(
  protocol: Protocol,
  ringBusBytesPerNs: number,
  nodes: number,
  gen: GpuGeneration,
  bytes: number,
): number {
  let bus = ringBusBytesPerNs * 0.92;
  if (protocol === 'LL') bus = Math.min(bus / 3.8, llMaxBusBandwidthGBps(gen, nodes));
  if (protocol === 'LL128') bus *= nodes === 1 ? 7 / 9 : 120 / 128;
  return bus * 0.5 * treeCorrectionFactor(protocol, bytes);
}
