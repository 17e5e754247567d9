import { GiB } from '../engine/units.js';
import { B200_SXM_180GB, GB200_186GB } from './gpusBlackwell.js';
import { cpuAdamParamsPerS } from './hostAdam.js';
import type { NodeSpec } from './types.js';

/**
 * DGX / HGX B200: 8 B200 through two fifth-generation NVSwitch chips (NVLink SHARP), 8 × ConnectX-7 400 Gb/s compute
 * NICs, 2 × Xeon Platinum 8570. `nvlinkBandwidthGBps` is the measured ring bus bandwidth, as for DGX H100.
 */
export const HGX_B200: NodeSpec = {
  name: 'hgx-b200',
  gpu: B200_SXM_180GB,
  gpusPerNode: 8,
  intra: 'nvswitch',
  // 8 × B200, NCCL 2.27.7, 8 GiB: ring 682.2 GB/s busbw with NVLS off, 838.0 with NVLS (ml-engineering network
  // README, AWS p6-b200); NVIDIA/nccl#1807: "830+".
  nvlinkBandwidthGBps: 682,
  nvlinkLatencyNs: 700,
  nvls: true,
  // NVLS busbw 838.0 on 8 GPUs is an algorithm bandwidth of 838.0 × 8 / 14 = 478.9 GB/s: 0.702 of the ring's 682.
  nvlsEfficiency: 0.702,
  pcieBandwidthGBps: 50,
  pcieLatencyNs: 1000,
  // A B200 node's topology shows GPU0/GPU1 and NIC0/NIC1 under one PCIe switch (the-dsvolk.github.io B200 explorer).
  gpusPerPcieSwitch: 2,
  // 2 × Xeon 8570 (Emerald Rapids), 4 UPI links at 20 GT/s: ~160 GB/s a direction, nominal (uncertain).
  interSocketBandwidthGBps: 160,
  nicsPerNode: 8,
  // 2 TB in 32 DIMMs, two per channel, 8 channels per socket: DDR5 at two DIMMs per channel taken at 4,400 MT/s as on
  // DGX H100, 563.2 GB/s (the speed is not published: uncertain).
  hostAdamParamsPerS: cpuAdamParamsPerS(563.2),
  hostMemoryBytes: 2048 * GiB,
  source:
    'NVIDIA DGX B200 user guide (8 × B200, 2 fifth-generation NVLink switches, 8 × ConnectX-7 400 Gb/s, 2 × Xeon ' +
    '8570, 2 TB in 32 DIMMs); 8-GPU all_reduce busbw ring 682 / NVLS 838 GB/s (ml-engineering network README, NCCL ' +
    '2.27.7); PCIe switch sharing from a published B200 topology; ' +
    'host memory speed and UPI bandwidth estimates (uncertain).',
};

/**
 * GB200 NVL72 as one node: the rack's 72 GPUs in one NVLink domain through 9 NVLink switch trays, so tensor and expert
 * parallel groups span its 18 compute trays over NVLink. Each tray holds 2 Grace CPUs and 4 GPUs, each GPU with its own
 * ConnectX-7 400 Gb/s NIC; a Grace reaches its 2 GPUs over NVLink-C2C (the "PCIe switch" of the topology: 2 GPUs each).
 */
export const GB200_NVL72: NodeSpec = {
  name: 'gb200-nvl72',
  gpu: GB200_186GB,
  gpusPerNode: 72,
  intra: 'nvswitch',
  // NVIDIA GTC25 S72583: NVL72 all-reduce ~850 GB/s busbw with NVLink SHARP, ~680 without; coreweave/nccl-tests#43
  // measured 839–847 GB/s on all 72 GPUs at 4–8 GiB.
  nvlinkBandwidthGBps: 680,
  nvlinkLatencyNs: 700,
  nvls: true,
  // 846.8 GB/s busbw on 72 GPUs (8 GiB, in place) is 846.8 × 72 / 142 = 429.4 GB/s of algorithm bandwidth: 0.631 of
  // 680. Smaller groups inside the rack (8 GPUs over 2 trays: 811 GB/s busbw, lixueduan.com, third-party) reach more.
  nvlsEfficiency: 0.631,
  // NVLink-C2C, 900 GB/s both directions per Grace, 450 each way, shared by its 2 GPUs; a GB300 DGX Station measured
  // host-to-device 359 GB/s over its C2C (ml-engineering network README): 0.8 of 450 per link (estimate).
  pcieBandwidthGBps: 360,
  pcieLatencyNs: 1000,
  gpusPerPcieSwitch: 2,
  // Carries no GPU traffic on an NVSwitch node; Grace-to-Grace C2C taken at 450 (not measured).
  interSocketBandwidthGBps: 450,
  nicsPerNode: 72,
  // 36 Grace CPUs, each LPDDR5X at ~512 GB/s (NVIDIA's Grace benchmarking guide: a 2-Grace superchip's STREAM triad
  // 820–972 GB/s at 80–95% of peak; derived) and 480 GB (third-party: NVIDIA's "up to 30 TB" of fast memory less
  // 13.4 TB of HBM is ~17 TB).
  hostAdamParamsPerS: cpuAdamParamsPerS(36 * 512),
  hostMemoryBytes: 36 * 480 * GiB,
  source:
    'NVIDIA DGX GB200 user guide (18 compute trays of 2 Grace + 4 GPUs, 9 NVLink switch trays, 4 × ConnectX-7 400G ' +
    'per tray); NVIDIA GTC25 S72583 (~850 / ~680 GB/s all-reduce busbw with / without NVLink SHARP); ' +
    'coreweave/nccl-tests#43 (839–847 GB/s on 72 GPUs); ' +
    'Grace memory and C2C bandwidth derived or third-party (uncertain). The rack is one node: ' +
    'a job of several racks crosses InfiniBand between them.',
};
