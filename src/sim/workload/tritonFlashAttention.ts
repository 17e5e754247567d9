/**
 * FlashAttention written in Triton: Tri Dao's `flash_attn_triton.py` (flash-attention 1.x), which MosaicML's
 * llm-foundry copied as `attn_impl: triton` and ran on its own pre-MLIR Triton build (`triton-pre-mlir`, the
 * `triton_pre_mlir_sm90` branch, in llm-foundry's setup.py through v0.4.0). MPT's pretraining yamls and the
 * benchmark script's `--attn_impl` default name it up to llm-foundry 0.4 (2023), so the benchmark tables of that
 * year ran it.
 *
 * A100: Dao 2023 (arXiv 2307.08691) Fig. 4d = flash-attention README assets/flash2_a100_fwd_bwd_benchmark.png,
 * "FlashAttention Triton", causal, head dimension 128, 16k tokens per batch: forward + backward 50, 61, 68, 74, 78,
 * 80 TFLOP/s at sequence 512, 1k, 2k, 4k, 8k, 16k (FlashAttention-2 on the same plot: 99 … 189). The figure gives
 * only the forward + backward rate, so both passes take the same fraction of the peak (the sum is then the plot's at
 * every length; how it splits between the passes is not published). The plot counts half of s² causal; the kernel
 * executes the diagonal tiles whole, (n + 1) / 2n of s² over n 128-row blocks, as the model counts (kernelTime.ts
 * `causalWorkFraction`), so the fit is of the executed rate, plot × (n + 1) / n. Least squares over the six points
 * of e∞ · K / (K + K½), K = (s + 128) / 2 keys per query row causal: e∞ = 80.4 TFLOP/s (0.258 of 312) and K½ = 96,
 * every point within 2.3% (test/sim/workload/tritonFlashAttention.test.ts).
 *
 * Hopper: no benchmark of this kernel on an H100 is published. It predates Triton's Hopper support (wgmma, TMA
 * arrived with the MLIR backend), so it runs Ampere's mma.sync instructions there, as FlashAttention-1 does. On the
 * README's plots FlashAttention-1 runs nearly as fast as this kernel on the A100 (83 against 80 TFLOP/s at 16k) and
 * gains 137 / 83 = 1.65× on the H100 (flash2_h100_fwd_bwd_benchmark.png, causal, head dimension 128, 16k; 1.57–1.78×
 * over the six lengths). The H100 figures are the A100's times that 1.65, an assumption `simulate` names.
 */
import type { AttentionKernelEfficiency } from './attentionKernels.js';

/** Fig. 4d's forward + backward TFLOP/s of the Triton kernel on an A100 SXM, by sequence length (causal, d 128). */
export const TRITON_FLASH_A100_TFLOPS: ReadonlyArray<{ seqLen: number; tflops: number }> = [
  { seqLen: 512, tflops: 50 },
  { seqLen: 1024, tflops: 61 },
  { seqLen: 2048, tflops: 68 },
  { seqLen: 4096, tflops: 74 },
  { seqLen: 8192, tflops: 78 },
  { seqLen: 16384, tflops: 80 },
];

const A100_DENSE_TFLOPS = 312;
const H100_SXM_DENSE_TFLOPS = 989.4;

/** The long-sequence rate of the fit above, TFLOP/s, and its half-rate keys per query row. */
const A100_LONG_SEQUENCE_TFLOPS = 80.4;
const HALF_EFFICIENCY_KEYS = 96;

/** FlashAttention-1's forward + backward TFLOP/s at 16k, causal, d 128: H100 SXM 137, A100 SXM 83 (README plots). */
export const FA1_H100_OVER_A100 = 137 / 83;

export const TRITON_FLASH_A100: AttentionKernelEfficiency = {
  forward: A100_LONG_SEQUENCE_TFLOPS / A100_DENSE_TFLOPS,
  backward: A100_LONG_SEQUENCE_TFLOPS / A100_DENSE_TFLOPS,
  halfEfficiencyKeys: { forward: HALF_EFFICIENCY_KEYS, backward: HALF_EFFICIENCY_KEYS },
};

const HOPPER_FRACTION = (A100_LONG_SEQUENCE_TFLOPS * FA1_H100_OVER_A100) / H100_SXM_DENSE_TFLOPS;

export const TRITON_FLASH_HOPPER: AttentionKernelEfficiency = {
  forward: HOPPER_FRACTION,
  backward: HOPPER_FRACTION,
  halfEfficiencyKeys: { forward: HALF_EFFICIENCY_KEYS, backward: HALF_EFFICIENCY_KEYS },
  derivedFrom: "its A100 rate × 1.65, FlashAttention-1's H100/A100 ratio: no Hopper benchmark published",
};
