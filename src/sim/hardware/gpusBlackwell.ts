import type { AttentionKernel, AttentionKernelEfficiency } from '../workload/attentionKernels.js';
import type { GpuSpec } from './types.js';
import { ASSUMED_SUSTAINED_GEMM_FRACTION } from './sustainedGemm.js';
import { MAMF, MiB } from './gpuSources.js';

/**
 * NVIDIA Blackwell GPU presets. NVIDIA quotes tensor peaks with 2:4 sparsity; the dense figures here are half of them
 * (NVIDIA's GB200 NVL72 / HGX B200 specification table, "Individual Blackwell GPU Specifications"; the ml-engineering
 * accelerator table lists the same dense figures).
 */

/**
 * Fused attention on Blackwell. PyTorch's SDPA (`auto`) runs FlashAttention-2, which has no Blackwell tensor-core path:
 * forward 352–362 TFLOP/s at 2k–8k on B200 (meta-pytorch/tritonbench#171, head dim 128), 0.16 of 2,250; no backward is
 * published, the forward share is taken. cuDNN's (what Transformer Engine, and so Megatron-Core, runs on sm100) has no
 * absolute figure published: FlashAttention-4 reaches forward 1,418 and backward 1,209 TFLOP/s at head dim 128, 8k,
 * causal (Dao-AILab/flash-attention#2280, 2-CTA backward) and its paper (arXiv 2603.05451) puts it up to 1.3× over
 * cuDNN 9.13, so cuDNN is taken at those ÷ 1.3: 0.485 and 0.413 of 2,250 (derived, uncertain).
 */
const BLACKWELL_ATTENTION: Partial<Record<AttentionKernel, AttentionKernelEfficiency>> = {
  fa2: {
    forward: 0.16,
    backward: 0.16,
    derivedFrom: 'FlashAttention-2 has no Blackwell tensor-core path: its B200 forward share (tritonbench#171)',
  },
  cudnn: {
    forward: 0.485,
    backward: 0.413,
    derivedFrom: "FlashAttention-4's B200 figures over its stated 1.3× lead on cuDNN 9.13 (no cuDNN figure published)",
  },
};

/** NVIDIA B200 as in HGX and DGX B200 (Blackwell, 148 SMs, 180 GB HBM3e, up to 1,000 W). */
export const B200_SXM_180GB: GpuSpec = {
  name: 'b200-sxm-180gb',
  architecture: 'blackwell',
  // NVIDIA: 75 FP32; TF32 "2.2" PF sparse (1,125 dense, half of BF16, as the ml-engineering table gives it); 4.5 PF
  // BF16 and 9 PF FP8 sparse. NVFP4 (9 PF dense) is not modelled.
  peakTflops: { fp32: 75, tf32: 1125, fp16: 2250, bf16: 2250, fp8: 4500 },
  // MAMF bf16 1,745.0 of 2,250 = 0.776, fp8 (e4m3) 3,432.5 of 4,500 = 0.763; tf32 and fp32 Hopper's estimates.
  gemmCeiling: { fp32: 0.85, tf32: 0.75, fp16: 0.776, bf16: 0.776, fp8: 0.763 },
  sustainedGemmFraction: ASSUMED_SUSTAINED_GEMM_FRACTION,
  // The CUDA device query of pytorch/ao#4002: 178.35 GB total global memory (read as GiB: 192 GiB with 1/16 kept for
  // ECC is 180 GiB, less the driver's share; uncertain).
  memoryBytes: 182630 * MiB,
  hbmBandwidthGBps: 7700,
  // Peak DRAM read measured at 7.26 TB/s with TMA (SemiAnalysisAI/microbench-blackwell), 0.94; a copy streams less:
  // Hopper's 0.9 (estimate).
  hbmEfficiency: 0.9,
  smCount: 148,
  computeCapability: 10.0,
  // Device-reported maximum SM clock (ml-engineering clock table); NVIDIA publishes none.
  boostClockMHz: 1965,
  attentionKernels: BLACKWELL_ATTENTION,
  // NVLink 5: 18 links, 1.8 TB/s both directions together.
  nvlinkBandwidthGBps: 900,
  pcieGen: 5,
  // A cuLaunchKernel dispatch of ~5 µs measured on B200 (dogacel.github.io, 2026-03-14).
  kernelLaunchNs: 5000,
  source:
    'NVIDIA GB200 NVL72 / HGX B200 specification table (per GPU: 75 FP32; 2.25 PF BF16, 4.5 PF FP8 dense; 180 GB ' +
    'HBM3e 7.7 TB/s; NVLink 5 1.8 TB/s; up to 1,000 W); DGX B200 user guide (PCIe Gen5 hosts); pytorch/ao#4002 ' +
    `device query (148 SMs, compute capability 10.0, 178.35 GB); ${MAMF} B200 bf16 0.776, fp8 0.763; attention ` +
    'figures derived (see BLACKWELL_ATTENTION); sustained fraction assumed (Hopper); ' +
    'misaligned-GEMM slowdown not measured',
};

/** The Blackwell GPU of a GB200 superchip (GB200 NVL72): B200 silicon at up to 1,200 W, 186 GB HBM3e, 8 TB/s. */
export const GB200_186GB: GpuSpec = {
  ...B200_SXM_180GB,
  name: 'gb200-186gb',
  peakTflops: { fp32: 80, tf32: 1250, fp16: 2500, bf16: 2500, fp8: 5000 },
  // MAMF GB200 bf16 1,822.0 of 2,500 = 0.729, fp8 3,615.6 of 5,000 = 0.723.
  gemmCeiling: { fp32: 0.85, tf32: 0.75, fp16: 0.729, bf16: 0.729, fp8: 0.723 },
  // 186 GB, scaled from the B200's device total by 186 / 180 (derived, uncertain).
  memoryBytes: 188718 * MiB,
  hbmBandwidthGBps: 8000,
  boostClockMHz: 2062,
  source:
    'NVIDIA GB200 NVL72 specification table (per GPU: 80 FP32; 2.5 PF BF16, 5 PF FP8 dense; 186 GB HBM3e 8 TB/s; up ' +
    `to 1,200 W); ml-engineering clock table (2,062 MHz device-reported); ${MAMF} GB200 bf16 0.729, fp8 0.723; SM ` +
    'count, attention and launch figures as B200 (same die); memory total derived from the B200 query',
};
