import { GiB } from '../engine/units.js';
import { MI300X_192GB, MI355X_288GB } from './gpusAmd.js';
import { cpuAdamParamsPerS } from './hostAdam.js';
import { fullMesh } from './meshes.js';
import type { NodeSpec } from './types.js';

/**
 * AMD's 8-GPU Instinct platform: 8 OAMs on one baseboard, each GPU joined to each of the other 7 by one Infinity
 * Fabric (xGMI) link, no switch (so no in-network reduction), 2 × EPYC hosts, one 400 Gb/s NIC a GPU (AMD ROCm docs
 * mi300.md, "AMD MI300X Infinity Platform"). RCCL runs rings that load all 7 links alike (meshRing.ts).
 *
 * `nvlinkBandwidthGBps` is the 7 links together as RCCL uses them: AMD's RCCL blog ("Understanding RCCL Bandwidth and
 * xGMI Performance on AMD Instinct MI300X", 2025) measures 45.1–47.2 GB/s a link (TransferBench) against 64 GB/s raw,
 * and the 8-GPU all_reduce bus bandwidth at 7 × the slowest link: 317–319 GB/s at 4–16 GiB (AMD's validation bar: 304
 * GB/s at 8 GiB, ROCm/cvs mi300x_rccl_single_node_config.json). 7 × 45.5 = 318.5. Two GPUs share one link: 47.7 GB/s
 * measured (ml-engineering network README).
 */
export const MI300X_8GPU: NodeSpec = {
  name: 'mi300x-8gpu',
  gpu: MI300X_192GB,
  gpusPerNode: 8,
  intra: 'nvlink-mesh',
  nvlinkBandwidthGBps: 318.5,
  // No per-hop latency is published; RCCL's smallest 8-GPU all-reduce takes ~13 µs (AMD's RCCL blog). 1 µs a hop, as a
  // PCIe hop (estimate).
  nvlinkLatencyNs: 1000,
  nvls: false,
  nvlinkMesh: fullMesh(8),
  // PCIe Gen5 x16, as NCCL's topology rates it (48 GB/s, nccl src/graph/topo.cc) and the project's Gen5 figure.
  pcieBandwidthGBps: 50,
  pcieLatencyNs: 1000,
  // PCIe switches are optional on the reference platform: each GPU and its NIC under their own (or a root port).
  gpusPerPcieSwitch: 1,
  // 2 × EPYC 9004 joined by 3-4 xGMI links (~64 GB/s each way per link, nominal; uncertain).
  interSocketBandwidthGBps: 192,
  nicsPerNode: 8,
  // 2 × EPYC 9004, 12 channels of DDR5-4800 each (38.4 GB/s) = 921.6 GB/s; 24 × 64 GB (an 8 × MI300X system
  // description, mlcommons inference_results_v4.1 8xMI300X_2xEPYC-9374F.json, hardware only).
  hostAdamParamsPerS: cpuAdamParamsPerS(921.6),
  hostMemoryBytes: 1536 * GiB,
  source:
    'AMD ROCm docs mi300.md (fully connected 8-GPU Infinity Fabric mesh, 7 links a GPU, PCIe Gen5 x16, 2 × EPYC ' +
    '9004, 8 × 400G NICs); AMD ROCm blog on RCCL and xGMI (45–47 GB/s a link, 8-GPU all_reduce 317–319 GB/s); ' +
    'host memory from a published system description; per-hop latency and socket link estimates (uncertain).',
};

/**
 * MI355X platform: as MI300X's, with 7 links of 76.5 GB/s each way (AMD: 153 GB/s a link). No measured RCCL sweep is
 * published; AMD's MI350X validation bar is 350 GB/s all-reduce busbw at 8 GiB (ROCm/cvs
 * mi350x_rccl_single_node_config.json). The links are taken at MI300X's measured share of raw, 45.5 / 64, ×
 * 76.5 = 54.4 GB/s: 380.8 for 7 (estimate, uncertain).
 */
export const MI355X_8GPU: NodeSpec = {
  ...MI300X_8GPU,
  name: 'mi355x-8gpu',
  gpu: MI355X_288GB,
  nvlinkBandwidthGBps: 380.8,
  // 2 × EPYC 9005, 12 channels of DDR5-6000 each (48 GB/s) = 1,152 GB/s (nominal; the platform's memory size is not
  // published).
  hostAdamParamsPerS: cpuAdamParamsPerS(1152),
  hostMemoryBytes: undefined,
  source:
    'AMD MI355X (ml-engineering accelerator and network tables: 7 Infinity Fabric links of 153 GB/s both ways, full ' +
    'mesh of 8); link efficiency taken from MI300X (estimate); ROCm/cvs MI350X all_reduce bar 350 GB/s; host as ' +
    'MI300X with EPYC 9005 memory (uncertain).',
};
