import type { Dtype } from '../hardware/types.js';
import { elementwiseOp, gemmOp, type Op, type Stage } from './ops.js';

/**
 * FP8 training as Transformer Engine runs it under Megatron-Core (`--fp8-format hybrid`), on Hopper. Sources, read at
 * Megatron-LM core_v0.13.0 and TransformerEngine v2.8 (docs/modelling.md, "FP8"):
 * - The four linear layers of every transformer layer run their forward (fprop), dgrad and wgrad GEMMs in FP8: QKV and
 *   fc1 as `TELayerNormColumnParallelLinear` (te.pytorch.LayerNormLinear), the attention projection and fc2 as
 *   `TERowParallelLinear` (te.pytorch.Linear); megatron/core/models/gpt/gpt_layer_specs.py. The attention core
 *   (`fp8_dot_product_attention` is off by default and has no command-line flag), the word embeddings and the output
 *   layer (tensor_parallel.ColumnParallelLinear, outside the FP8 context) stay in bf16.
 * - Hopper runs FP8 GEMMs in the TN layout only (TE common/gemm/cublaslt_gemm.cu), so every FP8 operand used both ways
 *   gets a transposed FP8 copy. A plain input is cast by one fused cast-transpose kernel (read bf16, write both FP8
 *   copies; common/transpose/cast_transpose.cu); under delayed scaling the LayerNorm or RMSNorm before QKV and fc1
 *   writes FP8 itself and an FP8 transpose follows (pytorch/csrc/extensions/normalization.cpp). The output gradient
 *   is cast-transposed the same way in backward (module/base.py `grad_output_preprocess`).
 * - Delayed scaling (`DelayedScaling`, Megatron's default `--fp8-recipe delayed`) takes the scale from the amax history
 *   and computes this tensor's amax inside the cast. Current scaling (`tensorwise`, `Float8CurrentScaling`) first runs
 *   an amax kernel over the whole tensor, then the cast: one more read of it (csrc/quantizer.cpp
 *   `Float8CurrentScalingQuantizer::quantize_impl`); before QKV and fc1 the norm computes the amax and writes bf16, and
 *   a separate cast follows.
 * - Weights are cast (and transposed) once per step, at the first micro-batch (`is_first_microbatch`, module/base.py
 *   `get_weight_workspace`); `fp8WeightCastBytes` is that work.
 */
export type Fp8Recipe = 'delayed' | 'tensorwise' | 'mxfp8';

export const FP8_RECIPES: readonly Fp8Recipe[] = ['delayed', 'tensorwise', 'mxfp8'];

/**
 * Megatron's --fp8-recipe values: the modelled ones (FP8_RECIPES; `mxfp8` on Blackwell only) and one that is refused
 * with the reason (scenario/fp8Checks.ts): `blockwise` (not modelled).
 */
export const FP8_RECIPE_NAMES = ['delayed', 'tensorwise', 'mxfp8', 'blockwise'] as const;

/** How FP8 training runs (`training.fp8`). */
export interface Fp8Setup {
  recipe: Fp8Recipe;
  /**
   * Megatron's --fp8-param-gather: the FP8 weight is the model's only weight copy (te.pytorch.fp8_model_init), the
   * distributed optimizer casts its fp32 shard to FP8 and all-gathers one byte a parameter.
   */
  paramGather: boolean;
}

/**
 * Where a linear layer's input comes from: a norm fused with its cast (LayerNormLinear), or a plain tensor (Linear).
 */
export type Fp8Input = 'norm' | 'tensor';

/**
 * MXFP8 block scaling (`MXFP8BlockScaling`, Blackwell; TE docs features/low_precision_training/mxfp8): one E8M0 scale
 * byte per 32 consecutive values. Row-wise (blocks along a row) and column-wise copies cannot be derived from each
 * other, so both are quantized from the bf16 tensor, in one kernel (TE performance_considerations.rst), and no
 * transpose runs (Blackwell's FP8 GEMMs take TN, NT and NN layouts). No amax is reduced: every block has its own scale.
 * The norm before QKV and fc1 is taken to write bf16 and a separate quantize to follow (a fused norm-MXFP8 kernel is
 * not assumed).
 */
export const MXFP8_SCALE_BYTES_PER_ELEMENT = 1 / 32;

/**
 * HBM bytes per element to make the FP8 copies (row-wise and transposed) of a bf16 tensor: the cast-transpose reads 2
 * and writes 2; current scaling's amax kernel reads the tensor once more. After a fused norm (delayed scaling) only
 * the FP8 transpose is left: read 1, write 1. MXFP8 reads 2 and writes both 1-byte copies with their scales.
 */
export function fp8QuantizeBytesPerElement(recipe: Fp8Recipe, input: Fp8Input | 'gradient'): number {
  if (recipe === 'mxfp8') return 4 + 2 * MXFP8_SCALE_BYTES_PER_ELEMENT;
  if (recipe === 'delayed' && input === 'norm') return 2;
  return recipe === 'tensorwise' && input !== 'norm' ? 6 : 4;
}

/** The quantize kernel(s) of one tensor of `elements`, as one memory-bound op. */
function quantizeOp(name: string, elements: number, recipe: Fp8Recipe, input: Fp8Input | 'gradient'): Op {
  return elementwiseOp(name, elements, 1, elements * fp8QuantizeBytesPerElement(recipe, input));
}

const FP8: Dtype = 'fp8';

/** What shapes one linear layer: Y[T×out] = X[T×in]·W[in×out], the tensors whose gradients its wgrad completes. */
export interface LinearShape {
  name: string;
  tokens: number;
  inF: number;
  outF: number;
  params: string[];
  input: Fp8Input;
}

/**
 * A transformer layer's linear layer in FP8: the input's quantize kernel and the FP8 forward GEMM; in backward the
 * output gradient's cast-transpose, then dgrad and wgrad in FP8 (dgrad first, as Megatron orders them). The GEMMs read
 * 1-byte operands and write bf16.
 */
export function fp8LinearStage(l: LinearShape, recipe: Fp8Recipe): Stage {
  const lead = [l.inF, l.outF];
  const fp8Gemm = (name: string, m: number, n: number, k: number, params?: string[]) => ({
    ...gemmOp(name, m, n, k, 1, FP8, params, lead),
    dtype: FP8,
  });
  return {
    forward: [
      quantizeOp(`${l.name}.fp8.cast`, l.tokens * l.inF, recipe, l.input),
      fp8Gemm(l.name, l.tokens, l.outF, l.inF),
    ],
    backward: [
      quantizeOp(`${l.name}.fp8.grad-cast`, l.tokens * l.outF, recipe, 'gradient'),
      fp8Gemm(`${l.name}.dgrad`, l.tokens, l.inF, l.outF),
      fp8Gemm(`${l.name}.wgrad`, l.inF, l.outF, l.tokens, l.params),
    ],
  };
}

/**
 * HBM bytes of a step's weight casts on one rank, for `elements` FP8 weight elements of which the rank's optimizer
 * holds `shardElements`: without the FP8 parameter gather, the cast-transpose of every bf16 weight at the first
 * micro-batch (read 2, write 2); with it, the optimizer's cast of its fp32 shard to FP8 (read 4, write 1;
 * Megatron fp8_utils `_quantize_param_shard_impl`) and, after the gather, the transposes (read 1, write 1;
 * `post_all_gather_processing`). MXFP8 quantizes every bf16 weight into both copies with their scales (the parameter
 * gather is not modelled with it).
 */
export function fp8WeightCastBytes(
  elements: number,
  shardElements: number,
  paramGather: boolean,
  recipe: Fp8Recipe = 'delayed',
): number {
  if (recipe === 'mxfp8') return elements * fp8QuantizeBytesPerElement('mxfp8', 'tensor');
  return paramGather ? 5 * shardElements + 2 * elements : 4 * elements;
}

/**
 * Delayed scaling's amax reduction: when Megatron's FP8 context around a model chunk's transformer layers exits
 * (forward), and once in that chunk's backward, Transformer Engine all-reduces (MAX) the amaxes of every FP8 tensor
 * of the chunk in one call (`FP8GlobalStateManager.reduce_and_update_fp8_tensors`) over the amax reduction group,
 * tensor × data × context parallel (Megatron parallel_state `get_amax_reduction_group`), on the compute stream. Its
 * bytes: one fp32 amax per tensor, the input and weight of each of a layer's four FP8 GEMMs forward, their output
 * gradients backward.
 */
export function fp8AmaxReductionBytes(layers: number, kind: 'F' | 'B'): number {
  return layers * 4 * (kind === 'F' ? 2 : 1) * 4;
}

/**
 * Bytes per FP8 weight element that FP8 adds to a rank's memory: the cached FP8 weight and its transpose beside the
 * bf16 weight (module/base.py `_fp8_workspaces`), 2; none with the FP8 parameter gather, where the 1-byte FP8 weight
 * and its transpose replace the 2-byte bf16 weight. MXFP8 keeps both 1-byte copies and their scales beside the bf16
 * weight.
 */
export function fp8WeightCacheBytesPerElement(paramGather: boolean, recipe: Fp8Recipe = 'delayed'): number {
  if (recipe === 'mxfp8') return 2 + 2 * MXFP8_SCALE_BYTES_PER_ELEMENT;
  return paramGather ? 0 : 2;
}
