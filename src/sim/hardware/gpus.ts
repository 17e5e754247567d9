import type { GpuSpec, MisalignedGemmSlowdown } from './types.js';
import { ASSUMED_SUSTAINED_GEMM_FRACTION, SUSTAINED_GEMM_FRACTION } from './sustainedGemm.js';
import { LAUNCH, MAMF, MiB } from './gpuSources.js';
import { B200_SXM_180GB, GB200_186GB } from './gpusBlackwell.js';
import { MI300X_192GB, MI355X_288GB } from './gpusAmd.js';
import { A100_ATTENTION, HOPPER_ATTENTION } from '../workload/attentionKernels.js';

/**
 * GPU presets. Peaks are dense (no 2:4 sparsity) datasheet figures in TFLOP/s; memory sizes are the totals
 * nvidia-smi reports, in bytes. Figures marked "estimate" have no direct measurement behind them yet:
 * calibration (docs/calibration.md) replaces them with measured values.
 *
 * Shared sources:
 * - gemmCeiling: Stas Bekman, "Maximum Achievable Matmul FLOPS" (MAMF) table, ml-engineering,
 *   compute/accelerator/README.md (BF16 matmul, best shape from a brute-force search): A100 SXM 267.9/312 = 85.9%,
 *   A100 PCIe 256.4/312 = 82.2%, H100 SXM 792.1/989 = 80.1%, GH200 821.0/989 = 83.0%.
 * - kernelLaunchNs: host-side launch of one kernel is a few µs (a cuLaunchKernel dispatch path of ~5 µs
 *   measured on B200, dogacel.github.io 2026-03-14; a Python-issued op measured at 4.2 µs on a Hopper card in a
 *   public benchmark report). Estimate; the calibration's launch-latency microbenchmark replaces it.
 */

/** NVIDIA Tesla V100 SXM2 32 GB (Volta, DGX-1V). No TF32/BF16 path: absent. */
export const V100_SXM2_32GB: GpuSpec = {
  name: 'v100-sxm2-32gb',
  architecture: 'volta',
  peakTflops: { fp32: 15.7, fp16: 125 },
  // No MAMF row for V100; cuBLAS HGEMM is commonly reported near 100 TFLOP/s (0.8 of 125). Estimate.
  gemmCeiling: { fp32: 0.9, fp16: 0.8 },
  memoryBytes: 32768 * MiB,
  hbmBandwidthGBps: 900,
  // Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking" (arXiv:1804.06826):
  // 750 GB/s measured global-memory bandwidth of 900 → 0.83.
  hbmEfficiency: 0.83,
  smCount: 80,
  computeCapability: 7.0,
  boostClockMHz: 1530,
  // 6 NVLink2 links × 25 GB/s per direction (V100 datasheet: 300 GB/s total, both directions).
  nvlinkBandwidthGBps: 150,
  pcieGen: 3,
  kernelLaunchNs: 5000,
  source:
    'NVIDIA Tesla V100 datasheet (SXM2: 15.7 FP32, 125 tensor TFLOP/s, 900 GB/s HBM2, NVLink 300 GB/s); ' +
    'Volta whitepaper (80 SMs); Jia et al. 2018 arXiv:1804.06826 (750 GB/s measured); ' +
    `gemmCeiling fp16 0.8 estimate (uncertain); ${LAUNCH}`,
};

const A100_PEAKS = { fp32: 19.5, tf32: 156, fp16: 312, bf16: 312 };
// bf16/fp16 from MAMF (85.9% A100 SXM). TF32 and FP32 ceilings are estimates (uncertain).
const A100_SXM_CEILING = { fp32: 0.9, tf32: 0.8, fp16: 0.859, bf16: 0.859 };

/** NVIDIA A100 SXM4 40 GB (Ampere, DGX A100 first edition). */
export const A100_SXM4_40GB: GpuSpec = {
  name: 'a100-sxm4-40gb',
  architecture: 'ampere',
  peakTflops: { ...A100_PEAKS },
  gemmCeiling: { ...A100_SXM_CEILING },
  sustainedGemmFraction: SUSTAINED_GEMM_FRACTION.ampere,
  memoryBytes: 40960 * MiB,
  hbmBandwidthGBps: 1555,
  // STREAM-like kernels reach ~0.85-0.9 of peak on A100 (estimate, uncertain).
  hbmEfficiency: 0.88,
  smCount: 108,
  computeCapability: 8.0,
  boostClockMHz: 1410,
  attentionKernels: A100_ATTENTION,
  // 12 NVLink3 links × 25 GB/s per direction (600 GB/s total).
  nvlinkBandwidthGBps: 300,
  pcieGen: 4,
  kernelLaunchNs: 4500,
  source:
    'NVIDIA A100 datasheet (19.5 FP32, 156 TF32, 312 FP16/BF16 dense TFLOP/s; 40GB HBM2 1,555 GB/s; NVLink ' +
    `600 GB/s); Ampere GA100 whitepaper (108 SMs); ${MAMF} bf16 0.859; hbmEfficiency 0.88 estimate; ${LAUNCH}; ` +
    'attention: FlashAttention-2 paper (arXiv 2307.08691) Fig. 4',
};

/** NVIDIA A100 SXM4 80 GB (HBM2e). Same compute as the 40 GB part. */
export const A100_SXM4_80GB: GpuSpec = {
  ...A100_SXM4_40GB,
  name: 'a100-sxm4-80gb',
  peakTflops: { ...A100_PEAKS },
  gemmCeiling: { ...A100_SXM_CEILING },
  sustainedGemmFraction: SUSTAINED_GEMM_FRACTION.ampere,
  memoryBytes: 81920 * MiB,
  hbmBandwidthGBps: 2039,
  hbmEfficiency: 0.88,
  source:
    'NVIDIA A100 datasheet (80GB SXM: HBM2e 2,039 GB/s; peaks as 40GB); ' +
    `${MAMF} A100 SXM bf16 267.9/312 = 0.859; hbmEfficiency 0.88 estimate; ${LAUNCH}; attention as 40GB`,
};

/**
 * The slowdown by alignment in bytes measured on Hopper: one NVIDIA H200 with PyTorch 2.11 and cuBLAS 13.1 (CUDA
 * 13.0), an LM head's forward, input-gradient and weight-gradient GEMMs in fp16 (hidden 1024 and 2048, 4096
 * tokens, widths around 50304, 25216, 12672 and 6400), time per FLOP over the aligned neighbour's, median of the
 * eight widths per alignment (2 bytes: 5.4–6.1×; 4 bytes: 2.6–2.9×; 8 bytes: 2.6–3.0×; an earlier run the same
 * day gave medians 5.96, 2.81, 2.81). `scripts/measure-gemm-alignment.py`,
 * reports/calibration/h200/gemm-alignment.json. The H100 has the same GH100 die and cuBLAS kernels.
 */
export const HOPPER_MISALIGNED_GEMM_SLOWDOWN: MisalignedGemmSlowdown = { 2: 5.66, 4: 2.78, 8: 2.81 };

/** NVIDIA H100 SXM5 80 GB (Hopper, DGX H100). */
export const H100_SXM5_80GB: GpuSpec = {
  name: 'h100-sxm5-80gb',
  architecture: 'hopper',
  peakTflops: { fp32: 66.9, tf32: 494.7, fp16: 989.4, bf16: 989.4, fp8: 1978.9 },
  // bf16/fp16 0.801 and fp8 0.709 (e4m3 through torch._scaled_mm, 1402.6 of 1978.9 TFLOP/s at its best shape) from
  // MAMF; tf32/fp32 estimates (uncertain).
  gemmCeiling: { fp32: 0.85, tf32: 0.75, fp16: 0.801, bf16: 0.801, fp8: 0.709 },
  sustainedGemmFraction: SUSTAINED_GEMM_FRACTION.hopper,
  memoryBytes: 81559 * MiB,
  hbmBandwidthGBps: 3350,
  // A Hopper-class card's 4 GiB device copy measured 90.6% of peak in a public benchmark report; 0.9.
  hbmEfficiency: 0.9,
  smCount: 132,
  computeCapability: 9.0,
  boostClockMHz: 1980,
  attentionKernels: HOPPER_ATTENTION,
  misalignedGemmSlowdown: HOPPER_MISALIGNED_GEMM_SLOWDOWN,
  // 18 NVLink4 links × 25 GB/s per direction (900 GB/s total).
  nvlinkBandwidthGBps: 450,
  pcieGen: 5,
  kernelLaunchNs: 4000,
  source:
    'NVIDIA H100 Tensor Core GPU datasheet and Hopper whitepaper (SXM5: 66.9 FP32, 494.7 TF32, 989.4 FP16/BF16, ' +
    '1,978.9 FP8 dense TFLOP/s; 132 SMs; HBM3 3.35 TB/s; NVLink 900 GB/s); ' +
    `${MAMF} H100 SXM bf16 792.1/989 = 0.801, fp8 1402.6/1978.9 = 0.709; tf32 0.75 an estimate; ${LAUNCH}; ` +
    'attention: flash-attention README H100 plots, FlashAttention-3 paper (arXiv 2407.08608) Figs. 5-6 (FA2, FA3, ' +
    'cuDNN); misaligned-GEMM slowdown measured on an H200 (same GH100 die; ' +
    'reports/calibration/h200/gemm-alignment.json)',
};

/** NVIDIA H200 SXM 141 GB (Hopper with HBM3e). Same compute as H100 SXM5. */
export const H200_SXM_141GB: GpuSpec = {
  ...H100_SXM5_80GB,
  name: 'h200-sxm-141gb',
  peakTflops: { ...H100_SXM5_80GB.peakTflops },
  // Measured on one H200 (cuBLAS 13.1, reports/calibration/h200/measurements.jsonl): the median fraction of peak of
  // the 13 calibration GEMMs with every dimension at least 4096 (bf16 0.773–0.872, fp16 0.744–0.814, tf32
  // 0.605–0.803, fp32 0.740–0.769; an earlier run the same day: medians 0.85, 0.80, 0.75, 0.75). fp8 was not
  // measured here: 0.734 from the MAMF table's H200 SXM e4m3 figure, 1453.4 of 1978.9 TFLOP/s.
  gemmCeiling: { fp32: 0.76, tf32: 0.75, fp16: 0.79, bf16: 0.84, fp8: 0.734 },
  memoryBytes: 143771 * MiB,
  hbmBandwidthGBps: 4800,
  hbmEfficiency: 0.9,
  source:
    'NVIDIA H200 datasheet (141 GB HBM3e, 4.8 TB/s; compute as H100 SXM: 989 BF16 dense TFLOP/s; NVLink 900 GB/s); ' +
    'GEMM ceilings and misaligned-GEMM slowdown measured on one H200 (reports/calibration/h200); ' +
    `${LAUNCH}; attention as H100 (flash-attention#1438: FA3 within 5%)`,
};

/**
 * NVIDIA H800 SXM5 80 GB: the H100 for the Chinese market, H100 SXM5 compute and memory with NVLink cut to 400 GB/s in
 * both directions together (8 NVLink4 links, 200 GB/s each way).
 */
export const H800_SXM5_80GB: GpuSpec = {
  ...H100_SXM5_80GB,
  name: 'h800-sxm5-80gb',
  peakTflops: { ...H100_SXM5_80GB.peakTflops },
  nvlinkBandwidthGBps: 200,
  source:
    'NVIDIA H800 SXM5 product brief (compute and HBM3 as H100 SXM5; NVLink 400 GB/s); DeepSeek-AI, "DeepSeek-V3 ' +
    'Technical Report" (arXiv 2412.19437) §3.2.1 (H800 nodes, NVLink 160 GB/s achieved, IB 50 GB/s a GPU); kernel ' +
    'figures as H100 SXM5',
};

/** NVIDIA A100 PCIe 40 GB: the card for the PCIe-only server (no NVLink bridge assumed). */
export const A100_PCIE_40GB: GpuSpec = {
  ...A100_SXM4_40GB,
  name: 'a100-pcie-40gb',
  peakTflops: { ...A100_PEAKS },
  // MAMF A100 PCIe 256.4/312 = 0.822 (the 250 W card cannot hold boost clock under full tensor load).
  gemmCeiling: { fp32: 0.88, tf32: 0.78, fp16: 0.822, bf16: 0.822 },
  sustainedGemmFraction: SUSTAINED_GEMM_FRACTION.ampere,
  nvlinkBandwidthGBps: 0,
  source:
    'NVIDIA A100 PCIe datasheet (40GB HBM2 1,555 GB/s, same dense peaks as SXM, 250 W, PCIe Gen4 x16); ' +
    `${MAMF} A100 PCIe bf16 0.822; no NVLink bridge modelled; ${LAUNCH}`,
};

/**
 * NVIDIA H100 PCIe 80 GB (Hopper, GH100 with 114 SMs, HBM2e, 350 W): the PCIe card, modelled without its optional
 * two-card NVLink bridge (600 GB/s between a pair only).
 */
export const H100_PCIE_80GB: GpuSpec = {
  ...H100_SXM5_80GB,
  name: 'h100-pcie-80gb',
  peakTflops: { fp32: 51, tf32: 378, fp16: 756, bf16: 756, fp8: 1513 },
  // No MAMF row exists for the PCIe card; the best square GEMM of a public sweep (4096³, torch 2.9 + CUDA 12.8:
  // zzc0721/torch-performance-test-data#95) reached bf16 495.9 of 756 = 0.66, fp16 458.0 = 0.61, tf32 240.4 of 378 =
  // 0.64, fp32 37.0 of 51 = 0.72. Square shapes only, not a shape search: uncertain (MAMF finds 5-10% more on SXM).
  // fp8 is not in that sweep: the SXM5's MAMF share, 0.709, scaled by the bf16 shares (0.66 / 0.801): 0.58 (estimate).
  gemmCeiling: { fp32: 0.72, tf32: 0.64, fp16: 0.61, bf16: 0.66, fp8: 0.58 },
  memoryBytes: 81559 * MiB,
  hbmBandwidthGBps: 2000,
  smCount: 114,
  boostClockMHz: 1755,
  nvlinkBandwidthGBps: 0,
  source:
    'NVIDIA H100 datasheet, PCIe column (51 FP32; 378 TF32, 756 FP16/BF16, 1,513 FP8 dense TFLOP/s, half the sparse ' +
    'figures; 114 SMs; 80GB HBM2e 2,000 GB/s; PCIe Gen5) and product brief PB-11133-001 (350 W); boost 1,755 MHz ' +
    'from third-party spec tables (uncertain); GEMM ceilings from a square-shape sweep ' +
    "(zzc0721/torch-performance-test-data#95; uncertain); memory total taken as the SXM5 card's (uncertain); NVLink " +
    'bridge not modelled; kernel and attention figures as H100 SXM5 (same GH100 die, as fractions of its own peak)',
};

/** NVIDIA L40S 48 GB (Ada Lovelace AD102, GDDR6, 350 W, PCIe Gen4, no NVLink). */
export const L40S_48GB: GpuSpec = {
  name: 'l40s-48gb',
  architecture: 'ada',
  peakTflops: { fp32: 91.6, tf32: 183, fp16: 362.05, bf16: 362.05, fp8: 733 },
  // No MAMF row exists; a public square-GEMM sweep (zzc0721/torch-performance-test-data#43, torch 2.8 + CUDA 12.8)
  // lists 46.9 / 264.0 / 269.2 TFLOP/s in unlabelled columns, read as fp32 / fp16 / bf16 (0.51 / 0.73 / 0.74; low
  // confidence). tf32 and fp8 are the bf16 share (estimates).
  gemmCeiling: { fp32: 0.51, tf32: 0.74, fp16: 0.73, bf16: 0.74, fp8: 0.74 },
  sustainedGemmFraction: ASSUMED_SUSTAINED_GEMM_FRACTION,
  memoryBytes: 49152 * MiB,
  hbmBandwidthGBps: 864,
  // GDDR6 streams a little less of its peak than HBM: the A100's 0.88 taken (estimate, uncertain).
  hbmEfficiency: 0.88,
  smCount: 142,
  computeCapability: 8.9,
  boostClockMHz: 2520,
  // FlashAttention-2 runs on Ada (flash-attention README: Ampere, Ada, Hopper); no L40S benchmark is published, so
  // the A100 figures, as fractions of the 16-bit peak, stand in (attentionKernels.ts).
  attentionKernels: { fa2: { ...A100_ATTENTION.fa2!, derivedFrom: "the A100's FlashAttention-2 share of peak" } },
  nvlinkBandwidthGBps: 0,
  pcieGen: 4,
  kernelLaunchNs: 4500,
  source:
    'NVIDIA L40S datasheet (91.6 FP32; 183 TF32, 362.05 FP16/BF16, 733 FP8 dense TFLOP/s, half the sparse figures; ' +
    '48 GB GDDR6 864 GB/s; 350 W; PCIe Gen4 x16; no NVLink); 142 SMs and 2,520 MHz boost from third-party spec ' +
    'tables; compute capability 8.9 and FP8 in Transformer Engine on Ada (TE docs/support_matrix.rst); GEMM ceilings ' +
    'from a square-shape sweep read with low confidence (zzc0721/torch-performance-test-data#43); memory taken as ' +
    `48 GiB (nvidia-smi shows less with ECC on: uncertain); ${LAUNCH}`,
};

/** All GPU presets by name. */
export const GPU_PRESETS: Readonly<Record<string, GpuSpec>> = Object.freeze({
  [V100_SXM2_32GB.name]: V100_SXM2_32GB,
  [A100_SXM4_40GB.name]: A100_SXM4_40GB,
  [A100_SXM4_80GB.name]: A100_SXM4_80GB,
  [H100_SXM5_80GB.name]: H100_SXM5_80GB,
  [H200_SXM_141GB.name]: H200_SXM_141GB,
  [H800_SXM5_80GB.name]: H800_SXM5_80GB,
  [A100_PCIE_40GB.name]: A100_PCIE_40GB,
  [H100_PCIE_80GB.name]: H100_PCIE_80GB,
  [L40S_48GB.name]: L40S_48GB,
  [B200_SXM_180GB.name]: B200_SXM_180GB,
  [GB200_186GB.name]: GB200_186GB,
  [MI300X_192GB.name]: MI300X_192GB,
  [MI355X_288GB.name]: MI355X_288GB,
});
