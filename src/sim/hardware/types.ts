import type { AttentionKernel, AttentionKernelEfficiency } from '../workload/attentionKernels.js';
import type { GpuArchitecture } from './architectures.js';

/** Data types with a dense peak on a GPU. */
export type Dtype = 'fp32' | 'tf32' | 'fp16' | 'bf16' | 'fp8';

/** One GPU model. Every figure cites its datasheet or benchmark in the preset that sets it. */
export interface GpuSpec {
  name: string;
  /**
   * Its generation (architectures.ts): which collective library, tuning row, Transformer Engine features and reference
   * kernel figures go with it. Absent (a calibrated CPU, an older profile): implied by `computeCapability`.
   */
  architecture?: GpuArchitecture;
  /** Dense (no sparsity) peak per dtype in TFLOP/s; absent where the GPU has no such path. */
  peakTflops: Partial<Record<Dtype, number>>;
  /** Fraction of the dense peak that large, well-shaped GEMMs reach with cuBLAS (per dtype), in short bursts. */
  gemmCeiling: Partial<Record<Dtype, number>>;
  /**
   * Fraction of that burst rate the GEMMs of a training step sustain (power-capped clocks over seconds, real layer
   * shapes; sustainedGemm.ts: a constant per GPU generation, fitted on a declared subset); absent: 1. A calibrated
   * GEMM model (`measuredGemm`) is used as measured, without it.
   */
  sustainedGemmFraction?: number;
  memoryBytes: number;
  hbmBandwidthGBps: number;
  /** Fraction of HBM bandwidth a streaming (elementwise) kernel reaches. */
  hbmEfficiency: number;
  smCount: number;
  /**
   * CUDA compute capability (7.0 Volta, 8.0 A100, 9.0 Hopper); it says which fused attention kernels run
   * (attentionKernels.ts `flashRunsOn`). Absent: taken as Ampere or newer.
   */
  computeCapability?: number;
  /**
   * Boost clock of the SMs, MHz (datasheet). With `smCount` it sets the rate of kernels bound by instruction issue
   * rather than memory (kernelTime.ts `GENERIC_KERNEL_ELEMENTS_PER_SM_CYCLE`); absent: such kernels are timed by bytes.
   */
  boostClockMHz?: number;
  /** NVLink bandwidth per GPU, one direction, all links together (0 for PCIe-only cards). */
  nvlinkBandwidthGBps: number;
  pcieGen: 3 | 4 | 5;
  /** Host-side cost of launching one kernel, in ns. */
  kernelLaunchNs: number;
  /**
   * GEMM timing calibrated on this GPU (`clustersim calibrate`, docs/calibration.md), per dtype. Where present it
   * replaces the default efficiency curve for that dtype; absent, nothing changes.
   */
  measuredGemm?: Partial<Record<Dtype, MeasuredGemm>>;
  /**
   * Published efficiency of the fused attention kernels that run on this GPU (attentionKernels.ts); absent:
   * FlashAttention-2's A100 figures stand in for any kernel.
   */
  attentionKernels?: Partial<Record<AttentionKernel, AttentionKernelEfficiency>>;
  /**
   * Measured slowdown of a tensor-core GEMM with a leading dimension off the 16-byte alignment, by that alignment in
   * bytes (kernelTime.ts `misalignedGemmSlowdown`); absent: one published factor for any misalignment.
   */
  misalignedGemmSlowdown?: MisalignedGemmSlowdown;
  /**
   * Set for a CPU calibrated as the simulator's device (`calibrate --backend cpu`): its peak is the measured ceiling.
   */
  calibratedCpu?: boolean;
  /**
   * A GPU a scenario defines under a name of its own on top of another (the node preset's): the GPU whose kernel
   * figures it keeps, and those it keeps (scenario fields it did not give, and figures no field sets), for the summary;
   * `architecture` when the scenario named one (cluster.gpu.architecture) and `gpu` is that generation's reference.
   */
  kernelFiguresOf?: { gpu: string; figures: string[]; architecture?: GpuArchitecture };
  source: string;
}

/** Slowdown factors by alignment in bytes (2: an odd number of 2-byte elements, 4, 8). */
export type MisalignedGemmSlowdown = Partial<Record<1 | 2 | 4 | 8, number>>;

/**
 * A calibrated GEMM model: output tiles of tileM × tileN run in waves over `units` parallel units (SMs, or CPU
 * threads), each tile costing time ∝ (k per tile + smallKHalf); a full wave of full tiles runs at ceilingTflops.
 * Time in ns = 2·tileM·tileN·units·waves·(kPerTile + smallKHalf) / (ceilingTflops·1e3) × correction, where the
 * correction interpolates measured/model ratios at the measured shapes (absent: 1).
 */
export interface MeasuredGemm {
  tileM: number;
  tileN: number;
  units: number;
  /** Split-k (as cuBLAS does when tiles are fewer than units) never cuts k below this; 0: no split-k. */
  splitKMinK: number;
  /** Fitted throughput of whole waves of full tiles, TFLOP/s. */
  ceilingTflops: number;
  /** Fitted fixed cost of a tile, expressed as extra k (elements). */
  smallKHalf: number;
  /** Ratio measured / model at measured shapes, interpolated in log-shape space. */
  corrections?: { m: number; n: number; k: number; ratio: number }[];
}

/** How the GPUs inside a node talk to each other. */
export type IntraNodeFabric = 'nvswitch' | 'nvlink-mesh' | 'pcie';

/** One server. */
export interface NodeSpec {
  name: string;
  gpu: GpuSpec;
  gpusPerNode: number;
  intra: IntraNodeFabric;
  /** NVLink bandwidth per GPU one direction as NCCL can use it (nominal × efficiency). 0 when `intra` is pcie. */
  nvlinkBandwidthGBps: number;
  nvlinkLatencyNs: number;
  /** NVLink SHARP (in-switch reduction) is available: third-generation NVSwitch and later. */
  nvls: boolean;
  /**
   * The all-reduce algorithm bandwidth NVLS reaches, as a fraction of `nvlinkBandwidthGBps`, where measured on this
   * node; absent: the H100's (plans.ts `NVLS_EFFICIENCY`).
   */
  nvlsEfficiency?: number;
  /** For `nvlink-mesh`: the pairs of GPUs joined directly (NVLink, or AMD's Infinity Fabric) and their link counts. */
  nvlinkMesh?: { a: number; b: number; links: number }[];
  /** Per-direction bandwidth of one PCIe x16 link as achieved by DMA, GB/s. */
  pcieBandwidthGBps: number;
  pcieLatencyNs: number;
  /** GPUs behind each PCIe switch; the switches hang off the CPU root complexes. */
  gpusPerPcieSwitch: number;
  /** Bandwidth between the two CPU sockets (UPI / xGMI), one direction, GB/s. */
  interSocketBandwidthGBps: number;
  /** Network interfaces for the scale-out fabric. */
  nicsPerNode: number;
  /**
   * The node's host-side Adam throughput for optimizer offload, parameters per second, shared by the processes of
   * all its GPUs (DeepSpeed's CPU-Adam streams the optimizer state through host memory; `cpuAdamParamsPerS`).
   */
  hostAdamParamsPerS: number;
  /** Host (CPU) memory of the node, bytes, where optimizer offload keeps its state; undefined when not stated. */
  hostMemoryBytes?: number;
  source: string;
}

export type FabricKind = 'infiniband' | 'ethernet';

/** The scale-out network between nodes: a two-level fat tree (leaf and spine). */
export interface NetworkSpec {
  fabric: FabricKind;
  /** Line rate of one NIC port, Gb/s (HDR 200, NDR 400, RoCE 25/100/400). */
  linkGbps: number;
  /** Fraction of the line rate a large transfer reaches (protocol overhead, NCCL proxy). */
  linkEfficiency: number;
  /** One-way latency through a NIC and one switch, ns. */
  linkLatencyNs: number;
  /** Each GPU's traffic goes to its own NIC on its own leaf switch (rail-optimised). */
  railOptimized: boolean;
  /** Leaf uplink : downlink bandwidth is 1 : oversubscription (1 = non-blocking). */
  oversubscription: number;
  /** Nodes under one leaf switch (per rail when rail-optimised). */
  nodesPerLeaf: number;
  source: string;
}

export interface ClusterSpec {
  name: string;
  node: NodeSpec;
  nodes: number;
  /** NIC count is `node.nicsPerNode`; the network describes the ports and the switches. */
  network: NetworkSpec;
}
