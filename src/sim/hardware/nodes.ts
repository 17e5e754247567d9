import {
  A100_PCIE_40GB,
  A100_SXM4_40GB,
  A100_SXM4_80GB,
  H100_SXM5_80GB,
  H200_SXM_141GB,
  H800_SXM5_80GB,
  V100_SXM2_32GB,
} from './gpus.js';
import { GiB } from '../engine/units.js';
import { cpuAdamParamsPerS } from './hostAdam.js';
import { DGX1_MESH } from './meshes.js';
import { H100_PCIE_8GPU, L40S_8GPU } from './nodesPcie.js';
import { GB200_NVL72, HGX_B200 } from './nodesBlackwell.js';
import { MI300X_8GPU, MI355X_8GPU } from './nodesAmd.js';
import type { NodeSpec } from './types.js';

/**
 * Server presets. `nvlinkBandwidthGBps` is what NCCL really gets per GPU and direction: with a ring over the N
 * GPUs of a node, all_reduce_perf's bus bandwidth equals the per-GPU ring link bandwidth, so it is set to the
 * published large-message busbw.
 *
 * Per-link NVLink efficiency (S. Jeaugey, NVIDIA/nccl-tests#149, 2023-07-05): each NVLink has a line rate of
 * 25 GB/s per direction, ~20 GB/s effective with the SMs' 128-byte payloads; 12 links on A100 → 240 GB/s, other
 * GPU bottlenecks limit it to ~230 GB/s at 8 GB messages.
 *
 * PCIe DMA bandwidth per x16 link and direction (estimates, commonly measured with pinned copies):
 * Gen3 ≈ 12 GB/s of 15.75, Gen4 ≈ 24 of 31.5, Gen5 ≈ 50 of 63. Latencies are per GPU→GPU hop; they are
 * estimates (NCCL's own tuning model charges ~0.6 µs per NVLink step and ~1 µs per PCIe step for LL).
 * Host Adam throughput is derived from the host's memory bandwidth (`cpuAdamParamsPerS`); a scenario can set its own
 * (`cluster.node.hostAdamParamsPerS`, the whole node's rate).
 */

/** DGX-1 with 8× V100 SXM2 in the hybrid cube-mesh, 4× EDR 100 Gb/s NICs (one per PCIe switch of 2 GPUs). */
export const DGX1_V100: NodeSpec = {
  name: 'dgx-1-v100',
  gpu: V100_SXM2_32GB,
  gpusPerNode: 8,
  intra: 'nvlink-mesh',
  // 6 links × ~20 GB/s effective (same per-link efficiency as NVLink3 per nccl-tests#149). Uncertain: no
  // published DGX-1V all_reduce_perf table was found; NVIDIA's DGX-1V material quotes 25 GB/s/link line rate.
  nvlinkBandwidthGBps: 120,
  nvlinkLatencyNs: 700,
  nvls: false,
  nvlinkMesh: DGX1_MESH,
  pcieBandwidthGBps: 12,
  pcieLatencyNs: 1000,
  gpusPerPcieSwitch: 2,
  // 2× Xeon E5-2698 v4, 2 QPI links at 9.6 GT/s = 2 × 19.2 GB/s per direction.
  interSocketBandwidthGBps: 38.4,
  nicsPerNode: 4,
  // 2 sockets × 4 channels of DDR4-2133 (17.06 GB/s each) = 136.5 GB/s; 512 GB of 2133 MHz DDR4 (DGX-1 datasheet).
  hostAdamParamsPerS: cpuAdamParamsPerS(136.5),
  hostMemoryBytes: 512 * GiB,
  source:
    'NVIDIA DGX-1 with Tesla V100 system architecture whitepaper (hybrid cube-mesh, 6 NVLink2 per GPU, 25 GB/s per ' +
    'link and direction; 4× EDR IB; PCIe switches with 2 GPUs + 1 NIC); nvidia-smi topo -m of a DGX-1 (NV1/NV2 ' +
    'pairs as in nvlinkMesh, mlx5_0 PIX to GPU0/1); per-link NCCL efficiency from NVIDIA/nccl-tests#149. ' +
    'nvlinkBandwidthGBps 120 is derived, not measured (uncertain).',
};

/** DGX A100 (80 GB GPUs): NVSwitch gen2 (no NVLS), 8× HDR 200 Gb/s compute NICs, 4 PCIe switches of 2 GPUs + 2 NICs. */
export const DGX_A100_80GB: NodeSpec = {
  name: 'dgx-a100-80gb',
  gpu: A100_SXM4_80GB,
  gpusPerNode: 8,
  intra: 'nvswitch',
  nvlinkBandwidthGBps: 230,
  nvlinkLatencyNs: 700,
  nvls: false,
  pcieBandwidthGBps: 24,
  pcieLatencyNs: 1000,
  gpusPerPcieSwitch: 2,
  // 2× AMD EPYC 7742 joined by xGMI; ~100 GB/s per direction is an estimate (uncertain).
  interSocketBandwidthGBps: 100,
  nicsPerNode: 8,
  // 2 sockets × 8 channels of DDR4-3200 (25.6 GB/s each) = 409.6 GB/s (EPYC 7742); 2 TB of system memory
  // (DGX A100 640GB datasheet). Two DIMMs per channel may run below 3200 MT/s (uncertain).
  hostAdamParamsPerS: cpuAdamParamsPerS(409.6),
  hostMemoryBytes: 2048 * GiB,
  source:
    'NVIDIA DGX A100 system architecture whitepaper (6 NVSwitch gen2, 600 GB/s NVLink per GPU, 8× ConnectX-6 HDR ' +
    'compute NICs, 4 PCIe Gen4 switches with 2 GPUs + 2 NICs each, 2× EPYC 7742); all_reduce busbw ~230 GB/s on 8 ' +
    'GPUs at 8 GB (S. Jeaugey, NVIDIA/nccl-tests#149); NVLS not supported on A100 (NVIDIA/nccl-tests#228).',
};

/** DGX A100 with the original 40 GB GPUs; otherwise identical to the 80 GB system. */
export const DGX_A100_40GB: NodeSpec = {
  ...DGX_A100_80GB,
  name: 'dgx-a100-40gb',
  gpu: A100_SXM4_40GB,
  // 1 TB of system memory in the DGX A100 320GB system.
  hostMemoryBytes: 1024 * GiB,
  source: `${DGX_A100_80GB.source} GPUs: A100 SXM4 40GB (DGX A100 first edition).`,
};

/** DGX H100: NVSwitch gen3 with NVLink SHARP, 8× NDR 400 Gb/s compute NICs. */
export const DGX_H100: NodeSpec = {
  name: 'dgx-h100',
  gpu: H100_SXM5_80GB,
  gpusPerNode: 8,
  intra: 'nvswitch',
  // Ring busbw 365-370 GB/s (2-8 GPUs); NVLS reaches 480 GB/s busbw on 8 GPUs, which the collective model
  // produces from in-switch reduction, not from this number.
  nvlinkBandwidthGBps: 370,
  nvlinkLatencyNs: 700,
  nvls: true,
  pcieBandwidthGBps: 50,
  pcieLatencyNs: 1000,
  gpusPerPcieSwitch: 2,
  // 2× Xeon Platinum 8480C, 4 UPI links at 16 GT/s = 4 × 32 GB/s per direction (nominal; uncertain).
  interSocketBandwidthGBps: 128,
  nicsPerNode: 8,
  // 2 sockets × 8 channels of DDR5 = 563.2 GB/s (Xeon 8480C): 2 TB of system memory (DGX H100 user guide) is
  // 32 DIMMs, two per channel, where Sapphire Rapids runs DDR5 at 4400 MT/s (35.2 GB/s per channel), not 4800.
  hostAdamParamsPerS: cpuAdamParamsPerS(563.2),
  hostMemoryBytes: 2048 * GiB,
  source:
    'NVIDIA DGX H100 user guide / H100 whitepaper (4 NVSwitch gen3 with NVLink SHARP, 900 GB/s NVLink per GPU, 8× ' +
    'ConnectX-7 NDR 400 Gb/s, PCIe Gen5); 8× H100 all_reduce busbw ring 365-370 GB/s, NVLS 480 GB/s ' +
    '(NVIDIA/nccl#1455; 368.76 GB/s with NVLS disabled in NVIDIA/nccl-tests#309; 476 GB/s NVLS in ' +
    'NVIDIA/nccl-tests#290; 370 → 480 in NVIDIA/nccl#2140).',
};

/** HGX H200 8-GPU board: same NVLink4/NVSwitch gen3 fabric as DGX H100, 8× NDR 400 Gb/s. */
export const HGX_H200: NodeSpec = {
  ...DGX_H100,
  name: 'hgx-h200',
  gpu: H200_SXM_141GB,
  source:
    'NVIDIA HGX H200 (8× H200 SXM, NVLink 900 GB/s per GPU through NVSwitch gen3 with NVLink SHARP); busbw assumed ' +
    'equal to DGX H100 (same NVLink4 fabric; no H200-specific nccl-tests table found: uncertain). ' +
    'Host side as DGX H100.',
};

/**
 * An HGX H800 node as DeepSeek-V3 trained on: 8 H800 through NVSwitch, 8 × 400 Gb/s InfiniBand. Its NVLink moves 160
 * GB/s a GPU in practice (DeepSeek-V3 report §3.2.1), against the H100's 370 of 450.
 */
export const HGX_H800: NodeSpec = {
  ...DGX_H100,
  name: 'hgx-h800',
  gpu: H800_SXM5_80GB,
  nvlinkBandwidthGBps: 160,
  // NVLink SHARP on the H800's cut-down NVLink is not documented: off.
  nvls: false,
  source:
    'DeepSeek-AI, "DeepSeek-V3 Technical Report" (arXiv 2412.19437) §3.2.1: NVLink 160 GB/s, IB 50 GB/s a GPU (8 × ' +
    '400 Gb/s NICs); NVSwitch topology and host side as DGX H100 (not given; assumed); NVLS off (not documented).',
};

/**
 * Eight A100 PCIe cards in a PCIe-only server: 4 PCIe Gen4 switches with 2 GPUs each, two switches per socket,
 * 2 NICs (on switch 0 and switch 2). GPU↔GPU traffic between switches crosses the CPU root complex.
 */
export const PCIE_8GPU: NodeSpec = {
  name: 'pcie-8gpu',
  gpu: A100_PCIE_40GB,
  gpusPerNode: 8,
  intra: 'pcie',
  nvlinkBandwidthGBps: 0,
  nvlinkLatencyNs: 0,
  nvls: false,
  pcieBandwidthGBps: 24,
  pcieLatencyNs: 1000,
  gpusPerPcieSwitch: 2,
  // 2× Xeon (Ice Lake) with 3 UPI links at 11.2 GT/s = 3 × 22.4 GB/s per direction (nominal).
  interSocketBandwidthGBps: 67,
  nicsPerNode: 2,
  // 2 sockets × 8 channels of DDR4-3200 = 409.6 GB/s (Ice Lake); the memory size of a generic server is not stated.
  hostAdamParamsPerS: cpuAdamParamsPerS(409.6),
  source:
    'Generic 8-GPU PCIe Gen4 server (4 PCIe switches × 2 GPUs, 2 NICs, 2 sockets); A100 PCIe datasheet. On PCIe ' +
    'systems NCCL performance is set by what CPU and memory deliver (S. Jeaugey, NVIDIA/nccl#1639: 28 GB/s busbw ' +
    'on 8 PCIe Gen5 GPUs called good). Layout and bandwidths are estimates (uncertain).',
};

/** All node presets by name. */
export const NODE_PRESETS: Readonly<Record<string, NodeSpec>> = Object.freeze({
  [DGX1_V100.name]: DGX1_V100,
  [DGX_A100_80GB.name]: DGX_A100_80GB,
  [DGX_A100_40GB.name]: DGX_A100_40GB,
  [DGX_H100.name]: DGX_H100,
  [HGX_H200.name]: HGX_H200,
  [HGX_H800.name]: HGX_H800,
  [PCIE_8GPU.name]: PCIE_8GPU,
  [H100_PCIE_8GPU.name]: H100_PCIE_8GPU,
  [L40S_8GPU.name]: L40S_8GPU,
  [HGX_B200.name]: HGX_B200,
  [GB200_NVL72.name]: GB200_NVL72,
  [MI300X_8GPU.name]: MI300X_8GPU,
  [MI355X_8GPU.name]: MI355X_8GPU,
});
