import { H100_PCIE_80GB, L40S_48GB } from './gpus.js';
import { cpuAdamParamsPerS } from './hostAdam.js';
import type { NodeSpec } from './types.js';

/**
 * 8-GPU PCIe servers without NVLink. On them NCCL's bandwidth is set by PCIe and the host: "On PCI systems, the
 * performance you get is usually determined by the bandwidth your CPU and memory can deliver" (S. Jeaugey,
 * NVIDIA/nccl#1639: 8 PCIe Gen5 GPUs at 28 GB/s busbw); 8 × RTX PRO 6000 on PCIe Gen5 reach 37–41 GB/s
 * (voipmonitor/rtx6kpro hardware/pcie-bandwidth.md). No 8 × H100 PCIe or 8 × L40S all_reduce table is published.
 */

/** 8 × H100 PCIe behind 4 PCIe Gen5 switches of 2 GPUs, 2 sockets, 4 × 400 Gb/s NICs (a common layout; estimate). */
export const H100_PCIE_8GPU: NodeSpec = {
  name: 'h100-pcie-8gpu',
  gpu: H100_PCIE_80GB,
  gpusPerNode: 8,
  intra: 'pcie',
  nvlinkBandwidthGBps: 0,
  nvlinkLatencyNs: 0,
  nvls: false,
  // Gen5 x16 DMA, as NCCL rates it (48 GB/s, nccl src/graph/topo.cc) and the project's Gen5 figure.
  pcieBandwidthGBps: 50,
  pcieLatencyNs: 1000,
  gpusPerPcieSwitch: 2,
  // 2 × Xeon (Sapphire Rapids), 4 UPI links at 16 GT/s = 128 GB/s each way (nominal; uncertain).
  interSocketBandwidthGBps: 128,
  nicsPerNode: 4,
  // 2 sockets × 8 channels of DDR5-4800 (38.4 GB/s) = 614.4 GB/s; memory size not stated.
  hostAdamParamsPerS: cpuAdamParamsPerS(614.4),
  source:
    'Generic 8 × H100 PCIe server (4 Gen5 PCIe switches × 2 GPUs, 2 sockets, 4 NICs): layout an estimate ' +
    '(uncertain); NVLink bridges (pairs only) not modelled; PCIe rate as NCCL models Gen5 x16.',
};

/**
 * 8 × L40S attached to the CPUs' root ports, 4 a socket (the 8 × L40S server of NVIDIA/nccl-tests#273: GPU0–3 on
 * NUMA 0, GPU4–7 on NUMA 1, no PCIe switch), with NVIDIA's enterprise reference design "2-8-5-200": 8 × 200 Gb/s
 * east-west ports (docs.nvidia.com enterprise-rag-deployment-guide overview).
 */
export const L40S_8GPU: NodeSpec = {
  ...H100_PCIE_8GPU,
  name: 'l40s-8gpu',
  gpu: L40S_48GB,
  // Gen4 x16 DMA, as NCCL rates it (24 GB/s).
  pcieBandwidthGBps: 24,
  gpusPerPcieSwitch: 1,
  nicsPerNode: 8,
  source:
    'NVIDIA/nccl-tests#273 (8 × L40S on CPU root ports, 4 per socket); NVIDIA enterprise reference architecture ' +
    '2-8-5-200 (8 × 200 Gb/s east-west); PCIe Gen4 as NCCL rates it; socket link and host memory as the H100 PCIe ' +
    'server (uncertain).',
};
