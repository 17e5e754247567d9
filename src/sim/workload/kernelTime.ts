import { ScenarioError } from '../errors.js';
import type { Dtype, GpuSpec, MeasuredGemm, MisalignedGemmSlowdown } from '../hardware/types.js';
import type { AttentionShape, GemmShape, Op } from './ops.js';
import { attentionHalfEfficiencyKeys, attentionKernelEfficiency } from './attentionKernels.js';
import { optimizerStepBytesPerParam, type OptimizerStateTypes } from '../memory/optimizerState.js';

/**
 * Default kernel-time model (docs/modelling.md): time = max(FLOPs / (peak × efficiency),
 * bytes / (HBM bandwidth × hbmEfficiency)) + launch overhead. Calibration replaces the efficiency curves.
 */

/**
 * Output tile of a cuBLAS/CUTLASS tensor-core GEMM, m × n. 16-bit (and fp8) kernels commonly use
 * 128×128 CTA tiles (CUTLASS's default tensor-op tile for Ampere/Hopper). With 4-byte operands each
 * k-slice of A and B costs twice the shared memory and registers, so to keep the same pipeline depth the
 * kernels halve the output tile: we use 128×64 for fp32/tf32. A modelling choice, not a measured table.
 */
export function gemmTile(dtype: Dtype): { m: number; n: number } {
  return dtype === 'fp32' || dtype === 'tf32' ? { m: 128, n: 64 } : { m: 128, n: 128 };
}

/**
 * k at which the small-k factor k / (k + K) is one half. Each output tile pays a fixed prologue (filling
 * the shared-memory pipeline) and epilogue (writing C) worth about one 32-deep main-loop step; an
 * assumption for the default curve, to be replaced by calibration.
 */
export const GEMM_SMALL_K_HALF = 32;

/** Ceiling used when the GPU spec gives none for the dtype (typical cuBLAS large-GEMM fraction). */
export const DEFAULT_GEMM_CEILING = 0.7;

/** cuBLAS splits k across CTAs when there are too few output tiles to fill the SMs; never below this k. */
export const SPLIT_K_MIN_K = 256;

/**
 * Unfused attention's passes over the s×s score matrix — the softmax forward and backward and the batched
 * GEMMs that write or read it (QKᵀ, P·V and their gradients) — stream at this fraction of the GPU's
 * streaming-kernel bandwidth. From the FlashAttention paper (Dao et al. 2022, arXiv 2205.14135, Appendix
 * E.6, Tables 18–20: A100-SXM4-40GB, batch 16, 8 heads of dimension 64, fp16, average of 100 runs): standard
 * attention without dropout or mask takes 13.21 ms (Megatron) / 13.22 ms (PyTorch) forward + backward at
 * sequence 2048, where these passes at the streaming bandwidth would take 8.93 ms: 0.68. Dropout on the same
 * matrix is not slowed (Tables 15–17 add 2.3 ms forward and 1.9 ms backward for it, what its bytes take at
 * the streaming bandwidth). Checked against the other tables in the tests.
 */
export const UNFUSED_SCORE_PASS_FACTOR = 0.68;

/**
 * Tensor-core GEMM kernels read and write their operands 16 bytes at a time; cuBLAS's fast kernels need every
 * matrix dimension that can be a leading dimension to be a multiple of 16 bytes (8 fp16/bf16 elements, 4 tf32,
 * 16 fp8; cuBLAS documentation, "Tensor Core Usage" alignment rules, and NVIDIA's Matrix Multiplication
 * Background guide, "Tensor Core Requirements").
 */
export const TENSOR_OP_ALIGNMENT_BYTES = 16;

/**
 * How much longer a tensor-core GEMM takes when one of its leading dimensions is not so aligned and cuBLAS falls
 * back to a narrower-access kernel, on a GPU without a measured table (`GpuSpec.misalignedGemmSlowdown`): Netflix
 * measured its language-model head three times slower with vocabulary sizes off the boundary (128003-style sizes;
 * "Scaling LLM Post-Training at Netflix", Netflix Technology Blog, 2026-02-13: "tripling that layer's execution
 * time"), the cliff behind nanoGPT padding GPT-2's 50257 to 50304. One factor for any misalignment.
 */
export const MISALIGNED_GEMM_SLOWDOWN = 3;

/**
 * Bytes of one element as cuBLAS reads it (tf32 operands are stored as fp32), for the dtypes whose GEMMs run on
 * tensor cores (fp32 runs on the CUDA cores, where alignment matters little).
 */
const ELEMENT_BYTES: Partial<Record<Dtype, number>> = { fp8: 1, fp16: 2, bf16: 2, tf32: 4 };

/**
 * The alignment in bytes of one leading dimension of a tensor-core GEMM: the largest power of two up to 16 that
 * divides its width in bytes. 16 (aligned) for non-integer widths (a model divided by a parallel degree that a
 * framework would pad) and for dtypes off the tensor cores.
 */
export function dimAlignmentBytes(width: number, dtype: Dtype): number {
  const e = ELEMENT_BYTES[dtype];
  if (e === undefined || !Number.isInteger(width)) return TENSOR_OP_ALIGNMENT_BYTES;
  let a = 1;
  while (a < TENSOR_OP_ALIGNMENT_BYTES && (width * e) % (2 * a) === 0) a *= 2;
  return a;
}

/**
 * Whether a GEMM of this shape misses the tensor-core alignment: an integer leading dimension (`leadingDims`, or m,
 * n and k when the shape does not say) that is not a multiple of 16 bytes of `dtype`. The vocabulary is padded where
 * the framework pads it (`training.vocabDivisibleBy`, 128 with Megatron-DeepSpeed, and `--megatron-args`); a
 * Hugging Face model without a framework (GPT-2's 50257, BERT's 30522) is not.
 */
export function gemmMisaligned(g: Pick<GemmShape, 'm' | 'n' | 'k' | 'leadingDims'>, dtype: Dtype): boolean {
  return gemmAlignmentBytes(g, dtype) < TENSOR_OP_ALIGNMENT_BYTES;
}

/** The narrowest alignment in bytes among a GEMM's leading dimensions (16: aligned). */
function gemmAlignmentBytes(g: Pick<GemmShape, 'm' | 'n' | 'k' | 'leadingDims'>, dtype: Dtype): number {
  return Math.min(...(g.leadingDims ?? [g.m, g.n, g.k]).map((x) => dimAlignmentBytes(x, dtype)));
}

/** Whether one integer leading dimension of a tensor-core GEMM misses the 16-byte alignment (`gemmMisaligned`). */
export function dimMisaligned(width: number, dtype: Dtype): boolean {
  return dimAlignmentBytes(width, dtype) < TENSOR_OP_ALIGNMENT_BYTES;
}

/**
 * How many times longer this GEMM takes for its narrowest leading dimension: 1 when aligned; the GPU's measured
 * figure for that alignment (an alignment narrower than any it lists takes its narrowest's figure), or
 * `MISALIGNED_GEMM_SLOWDOWN` where it has none.
 */
export function misalignedGemmSlowdown(
  g: Pick<GemmShape, 'm' | 'n' | 'k' | 'leadingDims'>,
  dtype: Dtype,
  gpu: GpuSpec,
): number {
  const a = gemmAlignmentBytes(g, dtype);
  if (a >= TENSOR_OP_ALIGNMENT_BYTES) return 1;
  const table = gpu.misalignedGemmSlowdown ?? {};
  const listed = (Object.keys(table).map(Number) as (keyof MisalignedGemmSlowdown)[]).sort((x, y) => x - y);
  if (listed.length === 0) return MISALIGNED_GEMM_SLOWDOWN;
  return table[listed.filter((b) => b <= a).pop() ?? listed[0]]!;
}

/** Query (forward) / key (backward) block length of a flash kernel's work unit (FA2 uses 64–128). */
export const FLASH_BLOCK = 128;

/** The values of `training.precision`, each also the dtype its GEMMs run in. */
const PRECISIONS: readonly Dtype[] = ['bf16', 'fp16', 'tf32', 'fp32', 'fp8'];

/**
 * Why `gpu` cannot run GEMMs in `dtype`, or undefined: it has no dense peak for it. `source` says where the GPU's
 * figures come from (its spec alone when a scenario is read, before any calibration profile).
 */
export function precisionProblem(
  gpu: GpuSpec,
  dtype: Dtype,
  source = 'its spec or calibration profile',
): string | undefined {
  if ((gpu.peakTflops[dtype] ?? 0) > 0) return undefined;
  const runs = PRECISIONS.filter((p) => (gpu.peakTflops[p] ?? 0) > 0);
  const hint = runs.length > 0 ? `; use one it runs, for example --set training.precision=${runs[0]}` : '';
  return `${gpu.name} has no dense ${dtype} peak (${source} gives ${runs.join(', ') || 'none'})${hint}`;
}

function peakFlopsPerNs(gpu: GpuSpec, dtype: Dtype): number {
  const problem = precisionProblem(gpu, dtype);
  if (problem) throw new ScenarioError('training.precision', problem);
  return gpu.peakTflops[dtype]! * 1e3; // 1 TFLOP/s = 1e12 FLOP / 1e9 ns
}

/** Fraction of the SMs busy over all waves when `units` equal work units run one per SM. */
export function waveEfficiency(units: number, smCount: number): number {
  if (units <= 0) return 1;
  const waves = Math.ceil(units / smCount);
  return units / (waves * smCount);
}

/**
 * The GEMM ceiling a training step sustains: the burst ceiling × the generation's sustained fraction
 * (sustainedGemm.ts).
 */
export function sustainedGemmCeiling(gpu: GpuSpec, dtype: Dtype): number {
  return (gpu.gemmCeiling[dtype] ?? DEFAULT_GEMM_CEILING) * (gpu.sustainedGemmFraction ?? 1);
}

/**
 * Fraction of the dense peak a GEMM C[m×n] = A[m×k]·B[k×n] (× batch) reaches: the GPU's ceiling for
 * the dtype × tile quantisation (useful share of the padded tiles) × wave quantisation (tiles over the
 * SMs, with split-k when there are fewer tiles than SMs) × a small-k factor.
 */
/* eslint-disable-next-line max-params -- the GEMM shape (m, n, k, batch) with the GPU and dtype: the arguments of
 * cuBLAS itself */
export function gemmEfficiency(m: number, n: number, k: number, gpu: GpuSpec, dtype: Dtype, batch = 1): number {
  const tile = gemmTile(dtype);
  const tm = Math.ceil(m / tile.m);
  const tn = Math.ceil(n / tile.n);
  const tileEff = (m * n) / (tm * tile.m * tn * tile.n);
  const tiles = tm * tn * batch;
  let split = 1;
  if (tiles < gpu.smCount) {
    split = Math.max(1, Math.min(Math.floor(gpu.smCount / tiles), Math.floor(k / SPLIT_K_MIN_K)));
  }
  const kPerCta = k / split;
  const kEff = kPerCta / (kPerCta + GEMM_SMALL_K_HALF);
  return sustainedGemmCeiling(gpu, dtype) * tileEff * waveEfficiency(tiles * split, gpu.smCount) * kEff;
}

/**
 * Waves of output tiles and the k each tile covers under a calibrated model: tiles = ⌈m/tileM⌉·⌈n/tileN⌉·batch,
 * split over k (as in `gemmEfficiency`) when they are fewer than the units, then run in waves over the units.
 */
export function measuredGemmWaves(g: GemmShape, mg: MeasuredGemm): { waves: number; kPerTile: number } {
  const tiles = Math.ceil(g.m / mg.tileM) * Math.ceil(g.n / mg.tileN) * g.batch;
  let split = 1;
  if (mg.splitKMinK > 0 && tiles < mg.units)
    split = Math.max(1, Math.min(Math.floor(mg.units / tiles), Math.floor(g.k / mg.splitKMinK)));
  return { waves: Math.ceil((tiles * split) / mg.units), kPerTile: g.k / split };
}

/** Weight of the prior "no correction" in `gemmCorrection`, as much as one measured shape an octave away. */
export const GEMM_CORRECTION_PRIOR = 1;

/**
 * Measured/model ratio at shape `g`, interpolated from the calibration points by inverse-distance weighting in
 * log2(m, n, k) space (weight 1 / (d² + 0.05)², so the nearest shapes dominate) and shrunk towards 1 far from them.
 */
export function gemmCorrection(g: GemmShape, points: MeasuredGemm['corrections']): number {
  if (!points || points.length === 0) return 1;
  let weights = GEMM_CORRECTION_PRIOR;
  let sum = 0;
  for (const p of points) {
    const d2 = Math.log2(g.m / p.m) ** 2 + Math.log2(g.n / p.n) ** 2 + Math.log2(g.k / p.k) ** 2;
    const w = 1 / (d2 + 0.05) ** 2;
    weights += w;
    sum += w * Math.log2(p.ratio);
  }
  return 2 ** (sum / weights);
}

/** Time of one GEMM under a calibrated model, in ns, launch overhead not included. */
export function measuredGemmNs(g: GemmShape, mg: MeasuredGemm): number {
  const { waves, kPerTile } = measuredGemmWaves(g, mg);
  const flopPerNs = mg.ceilingTflops * 1e3;
  return (
    ((2 * mg.tileM * mg.tileN * mg.units * waves * (kPerTile + mg.smallKHalf)) / flopPerNs) *
    gemmCorrection(g, mg.corrections)
  );
}

/**
 * Fraction of the dense peak a flash-attention kernel reaches: its published forward or backward figure on this
 * GPU (attentionKernels.ts; FlashAttention-2 unless the shape names another) × wave quantisation over its work
 * units (batch × heads × sequence blocks, as FA2 parallelises) × L / (L + L½) over `keysPerQueryRow` L where the
 * kernel's figures give a half-efficiency key count L½ (each query block's fixed cost; absent: 1).
 */
export function attentionEfficiency(shape: AttentionShape, gpu: GpuSpec, keysPerQueryRow?: number): number {
  const units = shape.batchHeads * Math.ceil((shape.queryLen ?? shape.seqLen) / FLASH_BLOCK);
  const kernel = shape.kernel ?? 'fa2';
  const base = attentionKernelEfficiency(gpu, kernel, shape.backward);
  const half = attentionHalfEfficiencyKeys(gpu, kernel, shape.backward);
  const keyLoop = half === undefined || keysPerQueryRow === undefined ? 1 : keysPerQueryRow / (keysPerQueryRow + half);
  return base * waveEfficiency(units, gpu.smCount) * keyLoop;
}

/**
 * The keys one query row of a call works through on average: its executed FLOPs over 4·d per (row, key) pair
 * forward (8·d backward, the ops' convention) and over its rows. Causal over s: (s + 128)/2.
 */
export function keysPerQueryRow(shape: AttentionShape, executedFlops: number): number {
  const perPair = 4 * shape.headDim * (shape.backward ? 2 : 1);
  return executedFlops / (perPair * shape.batchHeads * (shape.queryLen ?? shape.seqLen));
}

/** Share of the conventional (full s×s) FLOPs a causal flash kernel executes: the blocks on or below the diagonal. */
export function causalWorkFraction(seqLen: number): number {
  const blocks = Math.ceil(seqLen / FLASH_BLOCK);
  return (blocks + 1) / (2 * blocks);
}

/**
 * How much longer a GEMM takes on `gpu.smCount − op.smMargin` SMs than on all of them: the ratio of the
 * efficiencies with and without the margin, each with its own wave quantisation, scaled by the SMs it keeps.
 */
function smMarginSlowdown(op: Op, gpu: GpuSpec, dtype: Dtype): number {
  const margin = op.smMargin ?? 0;
  if (margin <= 0) return 1;
  const sms = gpu.smCount - margin;
  const g = op.gemm;
  if (!g) return gpu.smCount / sms;
  const all = gemmEfficiency(g.m, g.n, g.k, gpu, dtype, g.batch);
  const fewer = gemmEfficiency(g.m, g.n, g.k, { ...gpu, smCount: sms }, dtype, g.batch) * (sms / gpu.smCount);
  return all / fewer;
}

/**
 * A GEMM's compute time in `dtype`: from a calibrated model of the whole kernel when the GPU has one (`measured`: its
 * memory traffic is in it, so it is not max-ed with HBM time), else its FLOPs at the peak times the shape's efficiency
 * (without a shape, a large well-shaped GEMM: the ceiling).
 */
function gemmComputeNs(op: Op, gpu: GpuSpec, dtype: Dtype): { ns: number; measured: boolean } {
  const g = op.gemm;
  const mg = gpu.measuredGemm?.[dtype];
  const slowdown = g ? misalignedGemmSlowdown(g, dtype, gpu) : 1;
  if (mg) {
    const ns =
      (g ? measuredGemmNs(g, mg) * slowdown : op.flops / (mg.ceilingTflops * 1e3)) * smMarginSlowdown(op, gpu, dtype);
    return { ns, measured: true };
  }
  const eff = g ? gemmEfficiency(g.m, g.n, g.k, gpu, dtype, g.batch) : sustainedGemmCeiling(gpu, dtype);
  return {
    ns: (op.flops / (peakFlopsPerNs(gpu, dtype) * eff)) * slowdown * smMarginSlowdown(op, gpu, dtype),
    measured: false,
  };
}

/**
 * Time of one op on one GPU in integer nanoseconds.
 * GEMMs run on tensor cores at `gemmEfficiency`; flash attention at `attentionEfficiency` (causal kernels
 * execute only the unmasked half); elementwise and optimizer ops compute on the CUDA cores (fp32 peak)
 * and are normally bound by HBM. The `dtype` asked for is used as is (fp32 is not silently run as tf32).
 * `launch: false` leaves out the launch overhead, for ops whose host issue cost is modelled separately
 * (`Op.hostNs`: the host pays the launch; the GPU runs back-to-back kernels without it).
 * @throws ScenarioError when the GPU has no peak for `dtype`
 */
export function opTimeNs(op: Op, gpu: GpuSpec, dtype: Dtype, opts: { launch?: boolean } = {}): number {
  const launchNs = opts.launch === false ? 0 : gpu.kernelLaunchNs;
  let computeNs = 0;
  if (op.flops > 0) {
    if (op.kind === 'gemm') {
      const t = gemmComputeNs(op, gpu, op.dtype ?? dtype);
      if (t.measured) return Math.round(t.ns + launchNs);
      computeNs = t.ns;
    } else if (op.kind === 'attention') {
      const a = op.attention;
      const executed = a?.causal ? op.flops * causalWorkFraction(a.seqLen) : op.flops;
      const eff = a
        ? attentionEfficiency(a, gpu, keysPerQueryRow(a, executed))
        : attentionKernelEfficiency(gpu, 'fa2', false);
      computeNs = executed / (peakFlopsPerNs(gpu, dtype) * eff);
    } else {
      const vectorPeak = gpu.peakTflops.fp32 !== undefined ? peakFlopsPerNs(gpu, 'fp32') : peakFlopsPerNs(gpu, dtype);
      computeNs = op.flops / vectorPeak;
    }
  }
  // 1 GB/s is 1 byte/ns.
  const memoryNs = op.bytes / (gpu.hbmBandwidthGBps * gpu.hbmEfficiency * (op.bandwidthFactor ?? 1));
  const indexNs = op.genericElements ? genericKernelNs(op.genericElements, gpu) : 0;
  return Math.round(Math.max(computeNs, memoryNs, indexNs) * (op.timeFactor ?? 1) + launchNs);
}

/**
 * PyTorch runs an element-wise op on its vectorized kernel only when every operand is contiguous and of the output's
 * shape. An op with a broadcast operand, a permuted one, a cast to a wider type, a concatenation or a strided copy
 * runs on its generic TensorIterator kernels (`elementwise_kernel`, `unrolled_elementwise_kernel`), whose speed is
 * set by the elements they index (per-element offset arithmetic), not by the bytes they move. Measured on one H200
 * (PyTorch 2.11, torch.profiler over one Llama-2-7B layer forward and backward at 4k tokens;
 * reports/calibration/h200/llama-layer-kernels.json): the 30 calls of these kernels that the layer's multiplies,
 * adds, negations and casts make handle 470 M elements in 1.33 ms, 354 G elements/s (bf16 and fp32 alike, 314–413
 * by kernel), where its vectorized kernels stream 4.0–4.4 TB/s. Per SM and clock cycle (132 SMs at 1,980 MHz): 1.35.
 * Other GPUs: the same per SM and cycle, an assumption (instruction issue, not memory, bounds these kernels).
 */
export const GENERIC_KERNEL_ELEMENTS_PER_SM_CYCLE = 1.35;

/**
 * For a GPU without a clock: the bytes of the streaming bandwidth that one generic-kernel element costs, as on the
 * H200 (4,320 GB/s over 354 G elements/s: 12.2).
 */
export const GENERIC_KERNEL_BYTES_PER_ELEMENT = 12;

/** Least time of a PyTorch generic element-wise kernel over `elements`, ns. */
export function genericKernelNs(elements: number, gpu: GpuSpec): number {
  if (gpu.boostClockMHz)
    return elements / (GENERIC_KERNEL_ELEMENTS_PER_SM_CYCLE * gpu.smCount * gpu.boostClockMHz * 1e-3);
  return (elements * GENERIC_KERNEL_BYTES_PER_ELEMENT) / (gpu.hbmBandwidthGBps * gpu.hbmEfficiency);
}

/** Adam arithmetic per parameter: two moment updates, bias correction, sqrt, divide, decay, update (≈ 15). */
export const ADAM_FLOPS_PER_PARAM = 15;
/** SGD with momentum and weight decay (≈ 5). */
export const SGD_FLOPS_PER_PARAM = 5;

/**
 * One fused optimizer step over `params` parameters (the shard this rank updates): memory-bound, its HBM bytes per
 * parameter from the state's types and the gradient's (`optimizerStepBytesPerParam`; 28 for mixed Adam with 16-bit
 * gradients and fp32 state).
 */
export function optimizerOp(
  params: number,
  opts: {
    optimizer?: 'adam' | 'sgd';
    precision?: 'mixed' | 'fp32';
    gradientBytes?: number;
    state?: OptimizerStateTypes;
  } = {},
): Op {
  const optimizer = opts.optimizer ?? 'adam';
  const precision = opts.precision ?? 'mixed';
  const gradientBytes = opts.gradientBytes ?? (precision === 'mixed' ? 2 : 4);
  const bytesPerParam = optimizerStepBytesPerParam(precision, optimizer, gradientBytes, opts.state);
  const flopsPerParam = optimizer === 'sgd' ? SGD_FLOPS_PER_PARAM : ADAM_FLOPS_PER_PARAM;
  return {
    name: `optimizer.${optimizer}`,
    kind: 'optimizer',
    flops: params * flopsPerParam,
    bytes: params * bytesPerParam,
  };
}
