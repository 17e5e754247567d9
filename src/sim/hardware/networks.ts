import type { NetworkSpec } from './types.js';

/**
 * Scale-out network presets: one port per NIC, a two-level fat tree. `linkEfficiency` is the share of the line
 * rate NCCL's network transport reaches on a large ring all-reduce (busbw per NIC / line rate).
 * `linkLatencyNs` is one-way through a NIC and one switch; the topology splits it over the NIC→leaf and
 * leaf→NIC hops, and charges the same again through the spine.
 *
 * Leaf sizes follow NVIDIA's SuperPOD reference architectures: HDR (QM8790, 40 ports) scalable units of 20
 * nodes, one leaf per rail with 20 ports down and 20 up; NDR (QM9700, 64 ports) units of 32 nodes.
 */

/** InfiniBand HDR, 200 Gb/s per port. */
export const IB_HDR: NetworkSpec = {
  fabric: 'infiniband',
  linkGbps: 200,
  // "you should get ... 24GB/s inter-node" per HDR NIC at 8 GB (S. Jeaugey, NVIDIA/nccl#412): 24/25.
  linkEfficiency: 0.96,
  linkLatencyNs: 1000,
  railOptimized: true,
  oversubscription: 1,
  nodesPerLeaf: 20,
  source:
    'NVIDIA/nccl#412 (S. Jeaugey: ~24 GB/s busbw per HDR NIC inter-node); DGX SuperPOD (A100) reference ' +
    'architecture: rail-optimised, non-blocking, 20-node scalable units. Latency ~1 µs NIC + switch (estimate).',
};

/** InfiniBand NDR, 400 Gb/s per port. */
export const IB_NDR: NetworkSpec = {
  fabric: 'infiniband',
  linkGbps: 400,
  // "For NDR @ 400Gbps you should see 46-48GB/s per NIC" (NVIDIA/nccl-tests#290, AddyLaddy): 47/50.
  linkEfficiency: 0.94,
  linkLatencyNs: 1000,
  railOptimized: true,
  oversubscription: 1,
  nodesPerLeaf: 32,
  source:
    'NVIDIA/nccl-tests#290 (46-48 GB/s per NDR NIC with NCCL_ALGO=RING); DGX SuperPOD (H100) reference ' +
    'architecture: rail-optimised, non-blocking, 32-node scalable units. Latency ~1 µs (estimate).',
};

/** InfiniBand EDR, 100 Gb/s per port: what the DGX-1 shipped with (4× EDR). */
export const IB_EDR: NetworkSpec = {
  fabric: 'infiniband',
  linkGbps: 100,
  // Assumed close to HDR's 0.96 and NDR's 0.94 (uncertain); NDR's taken.
  linkEfficiency: 0.94,
  linkLatencyNs: 1000,
  railOptimized: false,
  oversubscription: 1,
  nodesPerLeaf: 18,
  source:
    'NVIDIA DGX-1 system architecture whitepaper (4× EDR 100 Gb/s IB); 36-port EDR switches (SB7800) with 18 ' +
    'nodes down. Efficiency 0.94 assumed close to HDR/NDR (uncertain); latency ~1 µs (estimate).',
};

/** RoCE v2 over 25 GbE: a typical enterprise/cloud fabric, not rail-optimised, 3:1 oversubscribed ToR. */
export const ROCE_25: NetworkSpec = {
  fabric: 'ethernet',
  linkGbps: 25,
  linkEfficiency: 0.85,
  linkLatencyNs: 2500,
  railOptimized: false,
  oversubscription: 3,
  nodesPerLeaf: 16,
  source:
    'Estimate (uncertain): RoCE reaches less of line rate than IB (NVIDIA/nccl#495: 8×100G RoCE at ~75% called ' +
    '"a bit lower" than expected); 2.5 µs through NIC + Ethernet switch; 3:1 ToR oversubscription is a common ' +
    'enterprise choice.',
};

/** RoCE v2 over 100 GbE. */
export const ROCE_100: NetworkSpec = {
  fabric: 'ethernet',
  linkGbps: 100,
  linkEfficiency: 0.85,
  linkLatencyNs: 2000,
  railOptimized: false,
  oversubscription: 1,
  nodesPerLeaf: 16,
  source:
    'Estimate (uncertain): NVIDIA/nccl#495 (two A100 nodes, 8×100G RoCE, busbw ~75 GB/s = 0.75 of line rate, ' +
    'maintainers expected somewhat more); 0.85 assumed for a tuned fabric; latency ~2 µs.',
};

/** RoCE v2 over 400 GbE, rail-optimised as in current GPU cloud fabrics. */
export const ROCE_400: NetworkSpec = {
  fabric: 'ethernet',
  linkGbps: 400,
  linkEfficiency: 0.9,
  linkLatencyNs: 2000,
  railOptimized: true,
  oversubscription: 1,
  nodesPerLeaf: 32,
  source:
    'Estimate (uncertain): 400G RoCE (e.g. Spectrum-X / ConnectX-7) assumed slightly below NDR IB (0.94); ' +
    'rail-optimised 32-node leaves by analogy with the NDR SuperPOD; latency ~2 µs.',
};

/** All network presets by name. */
export const NETWORK_PRESETS: Readonly<Record<string, NetworkSpec>> = Object.freeze({
  'ib-edr': IB_EDR,
  'ib-hdr': IB_HDR,
  'ib-ndr': IB_NDR,
  'roce-25': ROCE_25,
  'roce-100': ROCE_100,
  'roce-400': ROCE_400,
});
