import { attentionWidth, hasDropout, isGatedMlp, mlpSizesOf, type ModelSpec } from '../workload/model.js';
import { isMoeLayer } from '../workload/moe.js';
import { mtpDepths, mtpLayerIndex } from '../workload/mtp.js';
import type { RecomputeMode } from '../workload/ops.js';

/**
 * Activation memory, after Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
 * Models" (2022), §4. Their count for a GPT layer, in bytes with 16-bit activations and 1-byte dropout
 * masks, is s·b·h·(34 + 5·a·s/h):
 *   attention 11·sbh + 5·as²b: QKV input 2, Q and K 4, V 2, proj input 2, dropout mask 1 (× sbh);
 *     softmax output 2, its dropout mask 1, dropout output 2 (× as²b)
 *   MLP 19·sbh: fc1 input 2, GELU input 8, fc2 input 8, dropout mask 1
 *   norms 4·sbh: two LayerNorm inputs.
 * We derive the same items from the model so that GQA (smaller K, V), SwiGLU (Megatron's fused
 * bias-SwiGLU keeps the 2f-wide fc1 output and recomputes silu) and models without dropout (Llama) are
 * counted as they are; for a GPT model (MHA, f = 4h, dropout) the result equals the paper's formula.
 * Flash attention's saved log-sum-exp (4·a·s·b bytes, < 0.1%) is omitted.
 */
export interface ActivationShape {
  microBatch: number;
  seqLen: number;
  tp: number;
  sequenceParallel: boolean;
  recompute: RecomputeMode;
  flashAttention: boolean;
  /** Bytes per stored activation element: 2 for fp16/bf16 (default), 4 for fp32 training. */
  bytesPerElement?: number;
  /** For `mlp` models and models with experts: which layer (default: the mean over layers). */
  layerIndex?: number;
  /** Element-wise work as eager PyTorch runs it (`training.kernels: eager`): Llama keeps more for its backward. */
  eager?: boolean;
  /** Per layer, the busiest expert-parallel rank's routed pairs against the balanced share (routing.ts); absent: 1. */
  expertLoadFactors?: readonly (number | undefined)[];
  /** Expert tensor-parallel size; absent: tp. */
  etp?: number;
}

/**
 * What eager Llama keeps besides the fused kernels' inputs, per layer, in units of s·b·h bytes: each RMSNorm keeps
 * an fp32 copy of its input (4, for pow's backward) and its normalised output (e, for the weight's gradient) on top
 * of the input a fused kernel keeps, 4 + e per norm; SwiGLU keeps the SiLU output (e per MLP element, for the
 * multiply's backward). The rotary embedding's multiplies keep only the cached cos and sin.
 */
function eagerExtraTerms(model: ModelSpec, e: number): { replicated: number; split: number } {
  if (model.arch !== 'llama') return { replicated: 0, split: 0 };
  return { replicated: 2 * (4 + e), split: isGatedMlp(model) ? e * (model.ffnHidden / model.hidden) : 0 };
}

/** Per-layer coefficients in units of s·b·h bytes (attention term in units of a·s²·b bytes). */
interface LayerTerms {
  /** Held whole on every TP rank unless sequence parallelism splits it. */
  replicated: number;
  /** Split by tensor parallelism. */
  split: number;
  /** The s×s attention matrices (unfused attention only), split by TP. */
  attention: number;
}

/**
 * A mixture-of-experts layer's MLP terms in place of the dense MLP's (units of s·b·h bytes), as Megatron-Core's
 * MoELayer keeps them with the all-to-all dispatcher: the router's fp32 logits (4E/h, on the rank's own tokens); each
 * routed token's copy at the experts (k·e: the experts keep the attention's tp, and the tokens are all-gathered over
 * it, so the copy is whole on every TP rank, `whole`); the experts' SwiGLU inputs and outputs as a dense MLP's, k
 * times, split over tp; the experts' outputs before they are weighted and summed (k·e, kept for the probabilities'
 * gradient); the shared experts as a dense MLP.
 */
function moeMlpTerms(
  model: ModelSpec,
  e: number,
  load = 1,
  etpPerTp = 1,
): { replicated: number; split: number; whole: number } {
  const moe = model.moe!;
  const h = model.hidden;
  // The busiest expert-parallel rank keeps `load` times a balanced rank's routed copies; it gathers them from its etp
  // expert tensor-parallel peers, each of which routed 1/t of the tokens (etp/t of them whole in all).
  const k = moe.topK * load;
  return {
    replicated: (4 * moe.experts) / h + moe.topK * e,
    split: (3 * e * (k * moe.expertFfnHidden + moe.sharedExpertFfnHidden)) / h,
    whole: k * e * etpPerTp,
  };
}

function layerTerms(
  model: ModelSpec,
  e: number,
  layer?: number,
  load?: number,
  etpPerTp?: number,
): LayerTerms & { whole: number } {
  const { hidden: h, heads: a, kvHeads: kv, ffnHidden: f } = model;
  const dropout = hasDropout(model);
  const masks = dropout ? 2 : 0; // attention-output and MLP-output dropout masks, 1 byte each
  const replicated = 2 * e /* two norm inputs */ + e /* QKV input */ + e /* fc1 input */ + masks;
  // The query and context are a·d wide: h, unless the heads have a width of their own (`headDim`).
  const attn = attentionWidth(model) / h;
  // Latent attention keeps its latents (each norm's input and the up-projection's) and every head's Q, K (the rotary
  // part expanded) and V; otherwise Q, K and V.
  const mla = model.mla;
  const qkv = mla
    ? (e *
        (a * (2 * (mla.qkNopeHeadDim + mla.qkRopeHeadDim) + mla.vHeadDim) + 2 * mla.qLoraRank + 2 * mla.kvLoraRank)) /
      h
    : e * attn * (1 + (2 * kv) / a);
  const projInput = e * attn;
  const attention = dropout ? 2 * e + 1 : e; // softmax output (+ mask and dropout output)
  if (layer !== undefined && isMoeLayer(model, layer)) {
    const moe = moeMlpTerms(model, e, load, etpPerTp);
    return { replicated: replicated + moe.replicated, split: qkv + projInput + moe.split, attention, whole: moe.whole };
  }
  const mlp = isGatedMlp(model) ? 3 * e * (f / h) : 2 * e * (f / h);
  return { replicated, split: qkv + projInput + mlp, attention, whole: 0 };
}

/** Activation bytes of one `mlp` linear layer: its input (for wgrad) and, between layers, the ReLU output. */
function mlpLayerBytes(model: ModelSpec, shape: ActivationShape, i: number): number {
  const sizes = mlpSizesOf(model);
  const e = shape.bytesPerElement ?? 2;
  const rows = shape.microBatch * shape.seqLen;
  const last = i === sizes.length - 2;
  return rows * e * (sizes[i] + (last ? 0 : sizes[i + 1]));
}

/**
 * Activation bytes one transformer layer keeps for its backward, per micro-batch, on one rank.
 * - no recompute: s·b·h·(R/t_sp + S/t) + A·a·s²·b/t, where R, S, A are the replicated, TP-split and
 *   attention-matrix terms (GPT: R = 10, S = 24, A = 5, giving 34 + 5as/h without parallelism);
 *   t_sp = t with sequence parallelism, else 1; A is 0 with flash attention.
 * - selective: the attention-matrix term is recomputed, so it drops.
 * - full: only the layer input, e·s·b·h (÷ t with sequence parallelism).
 */
export function activationBytesPerLayer(model: ModelSpec, shape: ActivationShape): number {
  if (model.arch === 'mlp') {
    const n = model.layers;
    if (shape.layerIndex !== undefined) return mlpLayerBytes(model, shape, shape.layerIndex);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += mlpLayerBytes(model, shape, i);
    return sum / n;
  }
  if (model.moe && shape.layerIndex === undefined) {
    let sum = 0;
    for (let i = 0; i < model.layers; i++) sum += activationBytesPerLayer(model, { ...shape, layerIndex: i });
    return sum / model.layers;
  }
  const e = shape.bytesPerElement ?? 2;
  const { seqLen: s, microBatch: b, tp: t } = shape;
  const h = model.hidden;
  const sbh = s * b * h;
  const tsp = shape.sequenceParallel ? t : 1;
  if (shape.recompute === 'full') return (e * sbh) / tsp;
  const layer = model.moe ? shape.layerIndex : undefined;
  const load = layer !== undefined ? shape.expertLoadFactors?.[layer] : undefined;
  const terms = layerTerms(model, e, layer, load, (shape.etp ?? t) / t);
  const extra = shape.eager ? eagerExtraTerms(model, e) : { replicated: 0, split: 0 };
  let bytes = sbh * ((terms.replicated + extra.replicated) / tsp + (terms.split + extra.split) / t + terms.whole);
  if (shape.recompute === 'none' && !shape.flashAttention) {
    bytes += (terms.attention * model.heads * s * s * b) / t;
  }
  return bytes;
}

/**
 * Extra activation bytes of the embedding per micro-batch: the embedding dropout mask (GPT, BERT) and
 * BERT's embedding LayerNorm input; ÷ t with sequence parallelism (Korthikanti et al. §4.3).
 */
export function embeddingActivationBytes(model: ModelSpec, shape: ActivationShape): number {
  if (model.arch === 'mlp') return 0;
  const e = shape.bytesPerElement ?? 2;
  const sbh = shape.seqLen * shape.microBatch * model.hidden;
  const tsp = shape.sequenceParallel ? shape.tp : 1;
  const mask = hasDropout(model) ? 1 : 0;
  const norm = model.arch === 'bert' ? e : 0;
  return (sbh * (mask + norm)) / tsp;
}

/**
 * Activation bytes of the output side per micro-batch: final-norm input and LM-head input (÷ t with
 * sequence parallelism), and the fp32 logits/probabilities the cross-entropy keeps, 4·s·b·V/t
 * (Korthikanti et al. §4.3). BERT's MLM transform adds its dense, GELU and LayerNorm inputs. Each
 * multi-token-prediction module (mtp.ts) adds its layer's activations, the inputs of its two norms, of eh_proj (2h
 * wide), of its final norm and head, and logits of its own: all alive from its forward to its backward, as the head's.
 */
export function headActivationBytes(model: ModelSpec, shape: ActivationShape): number {
  const rows = shape.seqLen * shape.microBatch;
  if (model.arch === 'mlp') {
    const sizes = mlpSizesOf(model);
    return 4 * rows * sizes[sizes.length - 1];
  }
  const e = shape.bytesPerElement ?? 2;
  const sbh = rows * model.hidden;
  const tsp = shape.sequenceParallel ? shape.tp : 1;
  const logits = (4 * rows * model.vocab) / shape.tp;
  const mlmTransform = model.arch === 'bert' ? 3 * e * sbh : 0;
  const depths = mtpDepths(model);
  const mtpModule =
    depths > 0 ? activationBytesPerLayer(model, { ...shape, layerIndex: mtpLayerIndex(model, 0) }) + 6 * e * sbh : 0;
  return (2 * e * sbh) / tsp + mlmTransform + logits * (1 + depths) + depths * mtpModule;
}

/** What a rank (one pipeline stage) holds. */
export interface StageActivationOptions {
  /** Transformer layers on this rank. */
  layers: number;
  /** Micro-batches whose activations are alive at the peak (1F1B stage 0 of p stages: p). Default 1. */
  microBatchesInFlight?: number;
  /** The stage holds the embedding (first pipeline stage). */
  firstStage?: boolean;
  /** The stage holds the final norm, LM head and loss (last pipeline stage). */
  lastStage?: boolean;
  /**
   * Bytes of the passes alive at the peak, when the caller counted them pass by pass over its schedule (a pipeline
   * stage: the layers of each chunk in flight, the embedding only with the first chunk of the first stage); replaces
   * (layers × per layer + embedding) × micro-batches in flight.
   */
  inFlightBytes?: number;
}

/**
 * Peak activation bytes on one rank: (layers × per-layer + embedding parts) × micro-batches in flight, plus the
 * larger of the head's part and the working set of the one layer being recomputed (full: its whole non-recompute
 * activations; selective without flash: its attention matrices). The head's part is counted for one micro-batch: it
 * is freed by that micro-batch's backward, which starts right after its forward, and before the backward recomputes
 * any layer, so it and a recompute working set are never held together.
 */
export function activationBytesPerRank(model: ModelSpec, shape: ActivationShape, opts: StageActivationOptions): number {
  const inFlight = opts.microBatchesInFlight ?? 1;
  if (model.arch === 'mlp') {
    let sum = 0;
    if (opts.inFlightBytes === undefined) for (let i = 0; i < model.layers; i++) sum += mlpLayerBytes(model, shape, i);
    return (opts.inFlightBytes ?? sum * inFlight) + (opts.lastStage ? headActivationBytes(model, shape) : 0);
  }
  let perMicroBatch = opts.layers * activationBytesPerLayer(model, shape);
  if (opts.firstStage) perMicroBatch += embeddingActivationBytes(model, shape);
  const total = opts.inFlightBytes ?? perMicroBatch * inFlight;
  const head = opts.lastStage ? headActivationBytes(model, shape) : 0;
  const working =
    opts.layers > 0 && shape.recompute !== 'none'
      ? activationBytesPerLayer(model, { ...shape, recompute: 'none' }) - activationBytesPerLayer(model, shape)
      : 0;
  // The head's tensors (the logits the loss keeps above all) are freed by the head's backward, which runs before any
  // layer of that micro-batch is recomputed for its own backward: the two are never alive together.
  return total + Math.max(head, working);
}

/**
 * Korthikanti et al.'s closed forms for a GPT layer, in bytes (16-bit activations), as printed:
 * no parallelism sbh(34 + 5as/h); TP sbh(10 + 24/t + 5as/(ht)); TP + SP sbh(34/t + 5as/(ht));
 * selective recompute drops the 5as/h term; full recompute 2sbh (÷ t with SP); flash attention also drops
 * the 5as/h term. A reference for tests and reports; `activationBytesPerLayer` is what the simulator uses.
 */
export function korthikantiBytesPerLayer(
  s: number,
  b: number,
  h: number,
  a: number,
  opts: { tp: number; sequenceParallel: boolean; recompute: RecomputeMode; flashAttention: boolean },
): number {
  const t = opts.tp;
  if (opts.recompute === 'full') return (2 * s * b * h) / (opts.sequenceParallel ? t : 1);
  const attention = opts.recompute === 'selective' || opts.flashAttention ? 0 : (5 * a * s) / (h * t);
  const linear = opts.sequenceParallel ? 34 / t : 10 + 24 / t;
  return s * b * h * (linear + attention);
}
