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

/**
 * InfiniBand XDR, 800 Gb/s per port: ConnectX-8 SuperNICs and Quantum-X800 switches (144 ports of 800 Gb/s). No
 * measured NCCL figure per 800G NIC is published; NDR's share of line rate is taken (estimate).
 */
export const IB_XDR: NetworkSpec = {
  fabric: 'infiniband',
  linkGbps: 800,
  linkEfficiency: 0.94,
  linkLatencyNs: 1000,
  railOptimized: true,
  oversubscription: 1,
  // DGX SuperPOD B300-XDR: 72 nodes a scalable unit on 8 leaves, one a rail (72 ports down, 72 up).
  nodesPerLeaf: 72,
  source:
    'NVIDIA ConnectX-8 SuperNIC (800 Gb/s) and Quantum-X800 Q3400 (144 × 800 Gb/s); DGX SuperPOD B300-XDR reference ' +
    'architecture (72-node scalable units on 8 leaf switches, rail-aligned). Efficiency as NDR and latency ~1 µs ' +
    '(estimates: no measured 800G NCCL figure found).',
};

/** RoCE over 200 GbE, as NVIDIA's enterprise reference design "2-8-5-200" for 8-GPU PCIe servers (8 × 200G). */
export const ROCE_200: NetworkSpec = {
  ...ROCE_400,
  linkGbps: 200,
  railOptimized: false,
  nodesPerLeaf: 32,
  source:
    'NVIDIA enterprise reference architecture 2-8-5-200 (8 × 200 Gb/s east-west a node, 4 to 32 nodes); efficiency ' +
    'and latency as roce-400; rail alignment not stated, taken as not (estimate).',
};

/**
 * RoCE over 800 GbE (Spectrum-X SN5600: 64 × 800 GbE; ConnectX-8), rail-optimised as NVIDIA's HGX AI Factory reference
 * design "2-8-9-800" lays it out. No measured NCCL figure per 800G NIC is published.
 */
export const ROCE_800: NetworkSpec = {
  ...ROCE_400,
  linkGbps: 800,
  nodesPerLeaf: 32,
  source:
    'NVIDIA Spectrum SN5600 (64 × 800 GbE, docs.nvidia.com sn5000), HGX AI Factory reference architecture 2-8-9-800 ' +
    '(rail-optimised); efficiency and latency as roce-400 (estimates: no measured 800G NCCL figure found).',
};

/** All network presets by name. */
export const NETWORK_PRESETS: Readonly<Record<string, NetworkSpec>> = Object.freeze({
  'ib-edr': IB_EDR,
  'ib-hdr': IB_HDR,
  'ib-ndr': IB_NDR,
  'ib-xdr': IB_XDR,
  'roce-25': ROCE_25,
  'roce-100': ROCE_100,
  'roce-200': ROCE_200,
  'roce-400': ROCE_400,
  'roce-800': ROCE_800,
});
