import type { AttentionKernelEfficiency } from '../workload/attentionKernels.js';
import type { GpuSpec } from './types.js';
import { ASSUMED_SUSTAINED_GEMM_FRACTION } from './sustainedGemm.js';
import { MAMF, MiB } from './gpuSources.js';

/**
 * AMD Instinct GPU presets (8 on a fully connected Infinity Fabric mesh: nodesAmd.ts). Peaks are dense figures from
 * AMD's ROCm documentation (docs/conceptual/gpu-arch/mi300.md) and product pages as the ml-engineering accelerator
 * table quotes them. There is no CUDA compute capability; `computeCapability` is left out. Kernels bound by instruction
 * issue are timed by their bytes (no `boostClockMHz`): the per-SM-cycle rate kernelTime.ts uses was measured on NVIDIA
 * SMs, not on CDNA compute units.
 */

/**
 * Fused attention on CDNA 4 as ROCm runs it (AITER's kernel, which ROCm's Transformer Engine and PyTorch use): AITER's
 * own figures in HazyResearch/HipKittens (analysis/attn, MI355X, bf16, head dim 128, 16 × 16 heads, causal): forward
 * 1,247 TFLOP/s and backward 1,109 at 16k, of 2,500 (0.50, 0.44; forward 4·s²·d per head halved when causal, backward
 * 2.5×, as attentionKernels.ts counts). Read at the long-sequence end; shorter sequences run slower (876 and 673 at
 * 2k). Output calls the kernel FlashAttention-2, the slot `auto` takes.
 */
const CDNA4_ATTENTION: AttentionKernelEfficiency = {
  forward: 0.5,
  backward: 0.44,
  derivedFrom: "AITER's fused attention on ROCm (HipKittens' MI355X benchmarks), in FlashAttention-2's place",
};

/** AMD Instinct MI300X (CDNA 3, gfx942): 304 CUs, 192 GB HBM3, 750 W. */
export const MI300X_192GB: GpuSpec = {
  name: 'mi300x-192gb',
  architecture: 'cdna3',
  peakTflops: { fp32: 163.4, tf32: 653.7, fp16: 1307.4, bf16: 1307.4, fp8: 2614.9 },
  // MAMF bf16 668.4 TFLOP/s (ROCm 6.3, TunableOp on; 51.4% of the 1,300 it divides by) = 0.511 of 1,307.4. fp16 as
  // bf16; tf32, fp32 and fp8 (no MAMF figure) take the bf16 share (estimates, uncertain).
  gemmCeiling: { fp32: 0.511, tf32: 0.511, fp16: 0.511, bf16: 0.511, fp8: 0.511 },
  sustainedGemmFraction: ASSUMED_SUSTAINED_GEMM_FRACTION,
  memoryBytes: 196608 * MiB,
  hbmBandwidthGBps: 5300,
  // RRZE-HPC/gpu-benches gpu-stream/mi300x.txt: scale (one load, one store) 3,997 GB/s of 5,300 = 0.754.
  hbmEfficiency: 0.754,
  smCount: 304,
  attentionKernels: {
    fa2: {
      ...CDNA4_ATTENTION,
      derivedFrom: "MI355X's AITER share of peak (no MI300X figure published), in FlashAttention-2's place",
    },
  },
  // 7 Infinity Fabric links × 64 GB/s each way (AMD: 128 GB/s per link, both directions).
  nvlinkBandwidthGBps: 448,
  pcieGen: 5,
  // No bare HIP launch latency is published; RCCL's smallest 8-GPU all-reduce takes ~13 µs without graphs (AMD's
  // RCCL blog, 2025). 5 µs is an estimate.
  kernelLaunchNs: 5000,
  source:
    'AMD ROCm docs mi300.md (304 CUs; 163.4 FP32, 653.7 TF32, 1,307.4 FP16/BF16, 2,614.9 FP8 dense TFLOP/s; 192 GB ' +
    'HBM3 5.3 TB/s; 7 Infinity Fabric links in a fully connected 8-GPU mesh; PCIe Gen5 x16); ml-engineering ' +
    `accelerator table (2,100 MHz, 750 W, 64 GB/s per link each way); ${MAMF} MI300X bf16 668.4 → 0.511; ` +
    'RRZE-HPC/gpu-benches stream (0.754); attention derived from MI355X; sustained fraction assumed (Hopper)',
};

/** AMD Instinct MI355X (CDNA 4, gfx950): 256 CUs, 288 GB HBM3E, 1,400 W. */
export const MI355X_288GB: GpuSpec = {
  name: 'mi355x-288gb',
  architecture: 'cdna4',
  peakTflops: { fp32: 157.3, fp16: 2500, bf16: 2500, fp8: 5000 },
  // MAMF bf16 1,565 TFLOP/s (ROCm 7.0.2, 12288×8192×8192) = 0.626 of AMD's 2,500 (the table divides by 2,300);
  // HipKittens measured AITER at 1,590.8 (8192³), 0.636. fp32 and fp8 take the bf16 share (estimates, uncertain).
  gemmCeiling: { fp32: 0.626, fp16: 0.626, bf16: 0.626, fp8: 0.626 },
  sustainedGemmFraction: ASSUMED_SUSTAINED_GEMM_FRACTION,
  memoryBytes: 294912 * MiB,
  hbmBandwidthGBps: 8000,
  // MI350X (same memory): TransferBench read 7,200 of 8,000 GB/s (ROCm/rocm-systems#8480); a copy streams less, by
  // the MI300X's scale/read ratio (3,997 / 4,199): 0.86 (estimate).
  hbmEfficiency: 0.86,
  smCount: 256,
  attentionKernels: { fa2: CDNA4_ATTENTION },
  // 7 Infinity Fabric links × 76.5 GB/s each way (AMD: 153 GB/s per link, both directions).
  nvlinkBandwidthGBps: 535.5,
  pcieGen: 5,
  kernelLaunchNs: 5000,
  source:
    'ml-engineering accelerator table quoting amd.com (256 CUs, 2,400 MHz; 157.3 FP32, 2,500 FP16/BF16, 5,000 FP8 ' +
    'dense TFLOP/s, no TF32 figure; 288 GB HBM3E 8 TB/s; 1,400 W; 153 GB/s per Infinity Fabric link, 7 links); ' +
    `${MAMF} MI355X bf16 1,565 → 0.626; HipKittens (AITER attention and GEMM); MI350X TransferBench read; ` +
    'launch latency, fp8 and fp32 ceilings and sustained fraction assumed',
};
