/**
 * Which fused attention kernel runs, and how close to the GPU's dense peak it gets.
 *
 * The figures are the kernels' own published benchmarks, in their own FLOP convention: forward 4·s²·d per
 * head (halved when causal), backward 2.5× the forward (the kernel recomputes the probabilities). The ops
 * count the backward as 2× the forward (`ops.ts`), so `attentionKernelEfficiency` scales the backward figure by
 * 2 / 2.5 to make time = the ops' FLOPs / (peak × efficiency) equal the benchmark's.
 *
 * Sources (head dimension 128, causal, sequence 2k–16k, 16k tokens per batch, fp16):
 * - A100 SXM, FlashAttention-2: Dao 2023 (arXiv 2307.08691) Fig. 4 = flash-attention README
 *   assets/flash2_a100_fwd_bwd_benchmark.png: forward + backward 155–189 TFLOP/s, 0.50–0.61 of 312; "up to
 *   73%" forward, "up to 63%" backward (§1, §4). 0.60 forward and 0.5625 backward give 0.57 combined.
 * - Hopper, FlashAttention-2 as PyTorch's SDPA runs it (what `auto` means): measured on one H200 (PyTorch 2.11,
 *   scripts/measure-attention.py, reports/calibration/h200/attention.json): forward 261–317 TFLOP/s, backward
 *   209–309 from 2k to 16k. Time per query row grows as (L + L½) over L keys per row, so each pass is a long-sequence
 *   efficiency and a half-efficiency key count, by least squares over the four lengths with the model's wave
 *   quantisation (0.97 at these shapes) taken out: forward 0.34 and 190 keys, backward 0.34 and 520 (every point
 *   within 4%; an earlier run the same day: 0.34/196 and 0.33/471). The flash-attention
 *   package's own FA2 is faster at short sequences: its README H100 plot (forward + backward 265 / 294 / 308 / 328
 *   TFLOP/s at 2k / 4k / 8k / 16k, up to 19% above SDPA's forward + backward at 2k and 5% at 16k) and Shah et al.
 *   2024 (arXiv 2407.08608) Fig. 5 (FA2 forward 298–335, up to 14% above SDPA's forward). A model of the flash-attn
 *   package's own FA2 on Hopper would be that much faster; `fa2` here is SDPA's.
 * - H100 SXM, FlashAttention-3: the same Fig. 5 (forward 521–616, 0.53–0.62) and Fig. 6 (backward, non-causal,
 *   501–561, 0.51–0.57; no causal backward is published, so 0.52, a little under the non-causal figure).
 * - H100 SXM, cuDNN fused attention (what Transformer Engine, and so Megatron-Core, runs on Hopper: TE's
 *   dot_product_attention/utils.py prefers FusedAttention on compute capability 9.0+): the same figures, cuDNN
 *   forward 484–539 (0.49–0.55), backward non-causal 465–516 (0.47–0.52).
 * - H200: the H100's (same GH100 compute; flash-attention issue #1438 measured FA3 within 5% of the H100's). The
 *   H200 measurement above puts today's cuDNN (9.19) at forward 403–596 TFLOP/s and backward 407–583, up to 28%
 *   faster than the 2024 figures at 16k; those are kept, as the H100 runs the checks compare with (2024–25 containers)
 *   predate this cuDNN.
 * PyTorch's `scaled_dot_product_attention` runs FlashAttention-2 on A100 and H100 in 2.2–2.4 and 2.5.1–2.10 (2.5.0
 * alone put cuDNN first, reverted by pytorch/pytorch#138522), so `auto` means FlashAttention-2. From 2.11 on Hopper
 * it prefers cuDNN again: `check_prefer_cudnn_attention` in aten's sdp_utils.cpp (in 2.10) puts cuDNN first on sm90
 * and sm100 when the cuDNN is newer than 9.15, which the one bundled with 2.11 is (huggingface/transformers#48163,
 * the maintainers' reading). The H200 run saw it: PyTorch 2.11 with cuDNN 9.19 ran cuDNN's kernel for every Llama
 * layer. With such a PyTorch on Hopper, `cudnn` is the kernel SDPA runs.
 */
import type { GpuSpec } from '../hardware/types.js';
import { TRITON_FLASH_A100, TRITON_FLASH_HOPPER } from './tritonFlashAttention.js';

/**
 * Kernels a scenario may name in `training.attentionKernel`; `auto` is FlashAttention-2 where it runs (Ampere and
 * newer), and the memory-efficient kernel below that.
 */
export const ATTENTION_KERNEL_NAMES = ['auto', 'fa2', 'fa3', 'cudnn', 'triton', 'mem-efficient'] as const;
export type AttentionKernelChoice = (typeof ATTENTION_KERNEL_NAMES)[number];
export type AttentionKernel = Exclude<AttentionKernelChoice, 'auto'>;

/** Fractions of the dense 16-bit peak, each pass in its kernel's own FLOP convention (backward = 2.5× forward). */
export interface AttentionKernelEfficiency {
  forward: number;
  backward: number;
  /**
   * Where measured: the keys per query row at which a pass reaches half its efficiency. Each query block pays a
   * fixed cost (loading it, rescaling and writing its output) besides its loop over the keys, so a pass runs at
   * efficiency × L / (L + this) over L keys per row, and `forward`/`backward` are the long-sequence limits.
   * Absent: one efficiency at every length (the published figures, read at their long-sequence end).
   */
  halfEfficiencyKeys?: { forward: number; backward: number };
  /**
   * Present when no benchmark of the kernel on this GPU is published and the figures are derived from another
   * GPU's: how (shown in `simulate`'s output).
   */
  derivedFrom?: string;
}

/** What the kernels are called in output. */
export const ATTENTION_KERNEL_LABELS: Record<AttentionKernel, string> = {
  fa2: 'FlashAttention-2',
  fa3: 'FlashAttention-3',
  cudnn: 'cuDNN fused attention',
  triton: "FlashAttention in Triton (MPT's attn_impl: triton)",
  'mem-efficient': "memory-efficient attention (xFormers' kernel in PyTorch's SDPA)",
};

/**
 * Compute capability below which FlashAttention-2 (and 3, and cuDNN's fused attention in PyTorch) does not run: the
 * flash-attention README lists Ampere, Ada and Hopper; on a V100 (7.0) PyTorch's `scaled_dot_product_attention` runs
 * the memory-efficient kernel that came from xFormers (`mem-efficient`).
 */
export const FLASH_MIN_COMPUTE_CAPABILITY = 8;

/**
 * The memory-efficient kernel's time over that of the unfused attention it replaces (two batched GEMMs around the
 * softmax), on a V100 in fp16: xFormers pull request #362 (facebookresearch/xformers, "Use cutlass for
 * memory-efficient attention", 2022), V100 section, over its benchmark configurations: forward 5% slower than the
 * vanilla PyTorch implementation at the median (25% faster on average, the small-head cases pulling the mean),
 * backward 15% slower at the median. The medians are taken. No absolute figure is published for training shapes, so
 * the kernel is timed as the model's unfused attention at the same shape times these ratios; it keeps no s × s
 * matrix, so its memory is a fused kernel's.
 */
export const MEM_EFFICIENT_TIME_OVER_UNFUSED = { forward: 1.05, backward: 1.15 } as const;

/** Whether FlashAttention-class kernels run on `gpu` (absent compute capability: taken as Ampere or newer). */
export function flashRunsOn(gpu: GpuSpec): boolean {
  return (gpu.computeCapability ?? FLASH_MIN_COMPUTE_CAPABILITY) >= FLASH_MIN_COMPUTE_CAPABILITY;
}

export const A100_ATTENTION: Partial<Record<AttentionKernel, AttentionKernelEfficiency>> = {
  fa2: { forward: 0.6, backward: 0.5625 },
  triton: TRITON_FLASH_A100,
};

export const HOPPER_ATTENTION: Partial<Record<AttentionKernel, AttentionKernelEfficiency>> = {
  fa2: { forward: 0.34, backward: 0.34, halfEfficiencyKeys: { forward: 190, backward: 520 } },
  fa3: { forward: 0.6, backward: 0.52 },
  cudnn: { forward: 0.53, backward: 0.48 },
  triton: TRITON_FLASH_HOPPER,
};

/**
 * For GPUs without published figures (V100, CPU profiles): FlashAttention-2 on A100, the kernel the model was
 * first built with.
 */
export const GENERIC_ATTENTION: AttentionKernelEfficiency = A100_ATTENTION.fa2!;

/** Our ops count the backward as 2× the forward; the benchmarks' kernels execute 2.5×. */
const BACKWARD_CONVENTION = 2 / 2.5;

/**
 * The kernel `choice` stands for: `auto` is what PyTorch's SDPA runs, FlashAttention-2, or the memory-efficient kernel
 * on a GPU where FlashAttention does not run (without `gpu`: FlashAttention-2).
 */
export function resolveAttentionKernel(choice: AttentionKernelChoice | undefined, gpu?: GpuSpec): AttentionKernel {
  if (choice !== undefined && choice !== 'auto') return choice;
  return gpu && !flashRunsOn(gpu) ? 'mem-efficient' : 'fa2';
}

/** The kernels with published figures on `gpu`; empty when it has none (the generic figure then applies). */
export function attentionKernelsOf(gpu: GpuSpec): AttentionKernel[] {
  return Object.keys(gpu.attentionKernels ?? {}) as AttentionKernel[];
}

/**
 * Base efficiency (before wave quantisation) of one pass of `kernel` on `gpu`, against the ops' FLOPs.
 * A GPU without figures uses the generic one for any kernel; scenario checks refuse a kernel a GPU with
 * figures does not list (`attentionKernelProblem`).
 */
export function attentionKernelEfficiency(gpu: GpuSpec, kernel: AttentionKernel, backward: boolean): number {
  const figures = gpu.attentionKernels?.[kernel] ?? GENERIC_ATTENTION;
  return backward ? figures.backward * BACKWARD_CONVENTION : figures.forward;
}

/**
 * The keys per query row at which a pass of `kernel` on `gpu` runs at half its efficiency; undefined where unmeasured.
 */
export function attentionHalfEfficiencyKeys(
  gpu: GpuSpec,
  kernel: AttentionKernel,
  backward: boolean,
): number | undefined {
  const half = (gpu.attentionKernels?.[kernel] ?? GENERIC_ATTENTION).halfEfficiencyKeys;
  return half && (backward ? half.backward : half.forward);
}

/**
 * Why `choice` cannot run on `gpu`, or undefined when it can. A GPU without figures of its own takes only
 * FlashAttention-2 (its A100 figures stand in): nothing says what FA3 or cuDNN would do there.
 */
export function attentionKernelProblem(gpu: GpuSpec, choice: AttentionKernelChoice): string | undefined {
  if (choice === 'auto') return undefined;
  if (!flashRunsOn(gpu)) {
    if (choice === 'mem-efficient') return undefined;
    return (
      `${choice}: ${ATTENTION_KERNEL_LABELS[choice]} needs compute capability ${FLASH_MIN_COMPUTE_CAPABILITY}.0 or ` +
      `more (Ampere or newer); ${gpu.name} has ${gpu.computeCapability!.toFixed(1)} and PyTorch's SDPA runs the ` +
      'memory-efficient kernel there: use auto or mem-efficient'
    );
  }
  if (choice === 'mem-efficient')
    return (
      'mem-efficient: its figures are for GPUs without FlashAttention (below compute capability ' +
      `${FLASH_MIN_COMPUTE_CAPABILITY}.0); on ${gpu.name} SDPA runs FlashAttention-2: use auto or fa2`
    );
  const known = attentionKernelsOf(gpu);
  if (known.includes(choice) || (known.length === 0 && choice === 'fa2')) return undefined;
  const hopperOnly = choice === 'fa3' ? ' (FlashAttention-3 needs a Hopper GPU)' : '';
  const there =
    known.length > 0
      ? `kernels with figures there: ${['auto', ...known].join(', ')}`
      : "use auto or fa2 (FlashAttention-2's A100 figures stand in)";
  return `${choice}: no published figures for ${ATTENTION_KERNEL_LABELS[choice]} on ${gpu.name}${hopperOnly}; ${there}`;
}

/** The attention kernel a step runs, as `simulate` reports it. */
export interface AttentionSummary {
  kernel: AttentionKernel;
  label: string;
  /**
   * Flash-class kernels: base fractions of the dense peak, each in the kernel's own FLOP convention (before wave
   * quantisation).
   */
  forwardEfficiency?: number;
  backwardEfficiency?: number;
  /** The memory-efficient kernel: its time over the unfused attention's (`MEM_EFFICIENT_TIME_OVER_UNFUSED`). */
  timeOverUnfused?: { forward: number; backward: number };
  /**
   * Whether the figures are the kernel's own on this GPU, derived from its figures on another GPU (`derivedFrom`
   * says how), or FlashAttention-2's A100 ones standing in.
   */
  figures: 'published' | 'derived' | 'stand-in';
  derivedFrom?: string;
}

export function attentionSummary(gpu: GpuSpec, choice: AttentionKernelChoice | undefined): AttentionSummary {
  const kernel = resolveAttentionKernel(choice, gpu);
  if (kernel === 'mem-efficient')
    return {
      kernel,
      label: ATTENTION_KERNEL_LABELS[kernel],
      timeOverUnfused: { ...MEM_EFFICIENT_TIME_OVER_UNFUSED },
      figures: 'published',
    };
  const own = gpu.attentionKernels?.[kernel];
  const f = own ?? GENERIC_ATTENTION;
  const figures = !own ? 'stand-in' : own.derivedFrom ? 'derived' : 'published';
  return {
    kernel,
    label: ATTENTION_KERNEL_LABELS[kernel],
    forwardEfficiency: f.forward,
    backwardEfficiency: f.backward,
    figures,
    ...(own?.derivedFrom ? { derivedFrom: own.derivedFrom } : {}),
  };
}
