/**
 * Model descriptions and their trainable tensors.
 *
 * Tensor names and registration order follow the Hugging Face implementations (`transformers`:
 * `GPT2LMHeadModel`, `LlamaForCausalLM`, `BertForMaskedLM`), because `nn.Module.parameters()` yields
 * tensors in registration order and PyTorch DDP packs gradient buckets in the reverse of that order
 * (docs/modelling.md).
 */

import type { MoeSpec } from './moe.js';
import { mlaKernelHeadDim, type MlaSpec } from './mla.js';
import { llamaTensors } from './llamaTensors.js';
import { mtpDepths } from './mtp.js';

/** Architecture family: decides norms, biases, MLP shape, position embeddings and masking. */
export type ModelArch = 'gpt' | 'llama' | 'bert' | 'mlp';

/** One model. Plain, read-only data. */
export interface ModelSpec {
  name: string;
  /**
   * `gpt`: pre-LN LayerNorm with biases, learned positions, GELU 2-matrix MLP, causal.
   * `llama`: pre-LN RMSNorm, no biases, rotary positions, SwiGLU 3-matrix MLP, GQA, causal, no dropout.
   * `bert`: post-LN encoder, bidirectional, learned positions + token types, MLM head.
   * `mlp`: a stack of linear layers given by `mlpSizes`.
   */
  arch: ModelArch;
  /** Transformer layers (for `mlp`: number of linear layers, `mlpSizes.length - 1`). */
  layers: number;
  /** Model width h (for `mlp`: the input width). */
  hidden: number;
  /** Attention (query) heads a. */
  heads: number;
  /** Key/value heads; < heads means grouped-query attention. */
  kvHeads: number;
  /**
   * Width d of one attention head where it is not hidden / heads (Hugging Face `head_dim`, Megatron `--kv-channels`):
   * Gemma, Mistral NeMo and the larger Qwen3 project h to heads·d ≠ h. Absent: hidden / heads.
   */
  headDim?: number;
  /** Inner width of the MLP (per matrix; SwiGLU has two such input matrices). */
  ffnHidden: number;
  /** Sequence length the model is trained with (the default for a step). */
  seqLen: number;
  /** Vocabulary size V (for `mlp`: number of output classes). */
  vocab: number;
  /** The output (LM head / MLM decoder) weight is the input embedding matrix. */
  tiedEmbeddings: boolean;
  /** For `mlp` only: layer widths from input to output, e.g. [1024, 512, 10]. */
  mlpSizes?: number[];
  /** Mixture-of-experts MLPs (moe.ts); absent: every MLP dense. `llama` only. */
  moe?: MoeSpec;
  /** Multi-head latent attention (mla.ts) in place of the usual projections; `llama` only. */
  mla?: MlaSpec;
  /**
   * Multi-token-prediction depths (mtp.ts; DeepSeek-V3: 1): each one more transformer layer and pass through the
   * output head, on the last pipeline stage. `llama` only; absent: 0.
   */
  mtpLayers?: number;
  /** What the model's source describes that the simulation leaves out, in words; stated with every result. */
  notModelled?: string[];
}

/** One trainable tensor, as `nn.Module.parameters()` yields it. */
export interface ParamTensor {
  name: string;
  /** Number of elements of the whole (unsharded) tensor. */
  elements: number;
  /** −1 for embeddings, 0…layers−1 for transformer layers, `layers` for the final norm / head. */
  layer: number;
  /**
   * Megatron tensor parallelism splits this tensor over the TP ranks (column- or row-parallel
   * weights, column-parallel biases, vocab-parallel embeddings); otherwise every TP rank holds it
   * whole (norms, row-parallel biases, position embeddings).
   */
  tpSharded: boolean;
  /**
   * The part of the tensor that belongs to the key/value heads, and how many there are. Past tp = heads each TP rank
   * keeps a copy of one head's share (what `kvHeadsPerRank` simulates, as inference engines do; Megatron-LM since
   * NVIDIA/Megatron-LM#2565 all-gathers the QKV activations instead, and refused it before).
   */
  kv?: { elements: number; heads: number };
  /**
   * All routed experts' copies of one weight of a mixture-of-experts layer, as one tensor (Megatron-Core's GroupedMLP
   * keeps a layer's experts in one `weight1` and one `weight2`): expert parallelism splits it over ep by experts,
   * and its gradient is reduced over the expert-data-parallel ranks.
   */
  expert?: boolean;
}

/** Width of one attention head: the model's `headDim`, or h/a; with latent attention the kernel's (mla.ts). */
export function headDim(model: ModelSpec): number {
  if (model.mla) return mlaKernelHeadDim(model.mla);
  return model.headDim ?? model.hidden / model.heads;
}

/**
 * Width of the attention's query and context (output projection input), a·d: h unless the heads have a width of their
 * own; with latent attention the heads' values, a·d_v.
 */
export function attentionWidth(model: ModelSpec): number {
  return model.heads * (model.mla ? model.mla.vHeadDim : headDim(model));
}

/**
 * The model without a `headDim` that only repeats hidden / heads, so that such a model is the same as one without it.
 */
export function withPlainHeadDim(model: ModelSpec): ModelSpec {
  if (model.headDim === undefined || model.headDim !== model.hidden / model.heads) return model;
  const { headDim: _same, ...plain } = model;
  return plain;
}

/**
 * KV heads one tensor-parallel rank holds: kv/t, or 1 (replicated) when t exceeds kv (Megatron needs kv % t ==
 * 0 otherwise).
 */
export function kvHeadsPerRank(model: ModelSpec, tp: number): number {
  return model.kvHeads >= tp ? model.kvHeads / tp : 1;
}

/** Output width of the fused QKV projection: a·d + 2·kv·d (equals 3h without GQA and with d = h/a). */
export function qkvWidth(model: ModelSpec): number {
  return attentionWidth(model) + 2 * model.kvHeads * headDim(model);
}

/** Whether the architecture uses a gated (SwiGLU, 3-matrix) MLP. */
export function isGatedMlp(model: ModelSpec): boolean {
  return model.arch === 'llama';
}

/** Whether the architecture has dropout layers (Llama recipes train with dropout 0, HF has none). */
export function hasDropout(model: ModelSpec): boolean {
  return model.arch === 'gpt' || model.arch === 'bert';
}

/** Whether attention is causal (decoder) rather than bidirectional (encoder). */
export function isCausal(model: ModelSpec): boolean {
  return model.arch !== 'bert';
}

/** What a tensor's entry may add: its key/value heads' part (`ParamTensor.kv`), and whether it holds experts. */
export interface TensorExtra {
  kv?: number;
  expert?: boolean;
}

export type Push = (name: string, elements: number, layer: number, tpSharded: boolean, extra?: TensorExtra) => void;

function gptTensors(m: ModelSpec, push: Push): void {
  const h = m.hidden;
  const qkv = qkvWidth(m);
  const q = attentionWidth(m);
  // GPT2Model registers wte, wpe, h[...], ln_f; Conv1D registers weight then bias.
  push('transformer.wte.weight', m.vocab * h, -1, true);
  push('transformer.wpe.weight', m.seqLen * h, -1, false);
  for (let i = 0; i < m.layers; i++) {
    const p = `transformer.h.${i}.`;
    push(p + 'ln_1.weight', h, i, false);
    push(p + 'ln_1.bias', h, i, false);
    push(p + 'attn.c_attn.weight', h * qkv, i, true, { kv: h * (qkv - q) });
    push(p + 'attn.c_attn.bias', qkv, i, true, { kv: qkv - q });
    push(p + 'attn.c_proj.weight', q * h, i, true);
    push(p + 'attn.c_proj.bias', h, i, false);
    push(p + 'ln_2.weight', h, i, false);
    push(p + 'ln_2.bias', h, i, false);
    push(p + 'mlp.c_fc.weight', h * m.ffnHidden, i, true);
    push(p + 'mlp.c_fc.bias', m.ffnHidden, i, true);
    push(p + 'mlp.c_proj.weight', m.ffnHidden * h, i, true);
    push(p + 'mlp.c_proj.bias', h, i, false);
  }
  push('transformer.ln_f.weight', h, m.layers, false);
  push('transformer.ln_f.bias', h, m.layers, false);
  if (!m.tiedEmbeddings) push('lm_head.weight', m.vocab * h, m.layers, true);
}

function bertTensors(m: ModelSpec, push: Push): void {
  const h = m.hidden;
  const f = m.ffnHidden;
  const kv = m.kvHeads * headDim(m);
  const q = attentionWidth(m);
  // BertForMaskedLM: embeddings, encoder, MLM head. No pooler and no next-sentence head (RoBERTa-style
  // MLM-only pre-training); BertForPreTraining would add 1.05M (pooler) + 2k (NSP) for bert-large.
  push('bert.embeddings.word_embeddings.weight', m.vocab * h, -1, true);
  push('bert.embeddings.position_embeddings.weight', m.seqLen * h, -1, false);
  push('bert.embeddings.token_type_embeddings.weight', 2 * h, -1, false);
  push('bert.embeddings.LayerNorm.weight', h, -1, false);
  push('bert.embeddings.LayerNorm.bias', h, -1, false);
  for (let i = 0; i < m.layers; i++) {
    const p = `bert.encoder.layer.${i}.`;
    push(p + 'attention.self.query.weight', h * q, i, true);
    push(p + 'attention.self.query.bias', q, i, true);
    push(p + 'attention.self.key.weight', h * kv, i, true, { kv: h * kv });
    push(p + 'attention.self.key.bias', kv, i, true, { kv });
    push(p + 'attention.self.value.weight', h * kv, i, true, { kv: h * kv });
    push(p + 'attention.self.value.bias', kv, i, true, { kv });
    push(p + 'attention.output.dense.weight', q * h, i, true);
    push(p + 'attention.output.dense.bias', h, i, false);
    push(p + 'attention.output.LayerNorm.weight', h, i, false);
    push(p + 'attention.output.LayerNorm.bias', h, i, false);
    push(p + 'intermediate.dense.weight', h * f, i, true);
    push(p + 'intermediate.dense.bias', f, i, true);
    push(p + 'output.dense.weight', f * h, i, true);
    push(p + 'output.dense.bias', h, i, false);
    push(p + 'output.LayerNorm.weight', h, i, false);
    push(p + 'output.LayerNorm.bias', h, i, false);
  }
  const head = 'cls.predictions.';
  push(head + 'transform.dense.weight', h * h, m.layers, false);
  push(head + 'transform.dense.bias', h, m.layers, false);
  push(head + 'transform.LayerNorm.weight', h, m.layers, false);
  push(head + 'transform.LayerNorm.bias', h, m.layers, false);
  if (!m.tiedEmbeddings) push(head + 'decoder.weight', m.vocab * h, m.layers, true);
  push(head + 'bias', m.vocab, m.layers, true);
}

function mlpTensors(m: ModelSpec, push: Push): void {
  const sizes = mlpSizesOf(m);
  for (let i = 0; i + 1 < sizes.length; i++) {
    push(`layers.${i}.weight`, sizes[i] * sizes[i + 1], i, true);
    push(`layers.${i}.bias`, sizes[i + 1], i, i % 2 === 0);
  }
}

/** Layer widths of an `mlp` model, input first; falls back to [hidden, ffnHidden, vocab]. */
export function mlpSizesOf(model: ModelSpec): number[] {
  return model.mlpSizes && model.mlpSizes.length >= 2 ? model.mlpSizes : [model.hidden, model.ffnHidden, model.vocab];
}

/** The layers a pipeline splits, as the step compiler counts them: an MLP's linear layers (at most model.layers). */
export function pipelineLayerCount(model: ModelSpec): number {
  return model.arch === 'mlp' ? Math.min(model.layers, mlpSizesOf(model).length - 1) : model.layers;
}

/** The trainable tensors in registration order (the order `nn.Module.parameters()` yields them). */
export function parameterTensors(model: ModelSpec): ParamTensor[] {
  const out: ParamTensor[] = [];
  const push: Push = (name, elements, layer, tpSharded, extra = {}) =>
    out.push({
      name,
      elements,
      layer,
      tpSharded,
      ...(extra.kv ? { kv: { elements: extra.kv, heads: model.kvHeads } } : {}),
      ...(extra.expert ? { expert: true } : {}),
    });
  switch (model.arch) {
    case 'gpt':
      gptTensors(model, push);
      break;
    case 'llama':
      llamaTensors(model, push);
      break;
    case 'bert':
      bertTensors(model, push);
      break;
    case 'mlp':
      mlpTensors(model, push);
      break;
  }
  return out;
}

/** Total number of trainable parameters. */
export function parameterCount(model: ModelSpec): number {
  let n = 0;
  for (const t of parameterTensors(model)) n += t.elements;
  return n;
}

/**
 * Parameters one token passes through: all but the routed experts it is not sent to ((E − k)/E of every expert
 * tensor), the count MoE papers call active. Equals `parameterCount` for a dense model.
 */
export function activeParameterCount(model: ModelSpec): number {
  const moe = model.moe;
  let n = 0;
  for (const t of parameterTensors(model)) n += t.expert && moe ? (t.elements * moe.topK) / moe.experts : t.elements;
  return n;
}

/**
 * Elements of `tensor` one rank holds under tensor parallelism tp, expert parallelism ep (experts split by ep) and
 * expert tensor parallelism etp (each expert's width split by it; default tp).
 */
export function elementsPerModelRank(tensor: ParamTensor, tp: number, ep: number, etp = tp): number {
  return tensor.expert ? tensor.elements / (ep * etp) : elementsPerTpRank(tensor, tp);
}

/**
 * Elements of `tensor` held by one of `tp` tensor-parallel ranks (Megatron split; past tp = key/value heads, a copy of
 * one head's share of their part).
 */
export function elementsPerTpRank(tensor: ParamTensor, tp: number): number {
  if (!tensor.tpSharded) return tensor.elements;
  const kv = tensor.kv;
  if (kv && tp > kv.heads) return (tensor.elements - kv.elements) / tp + kv.elements / kv.heads;
  return tensor.elements / tp;
}

/** Parameters held by one TP rank for the given layers (all layers, embeddings and head by default). */
export function parametersPerTpRank(model: ModelSpec, tp: number, layerFilter?: (layer: number) => boolean): number {
  let n = 0;
  for (const t of parameterTensors(model)) {
    if (!layerFilter || layerFilter(t.layer)) n += elementsPerTpRank(t, tp);
  }
  return n;
}

/** Parameters of the largest single layer (embedding, transformer layer or head), whole. */
export function largestLayerParameters(model: ModelSpec): number {
  const perLayer = new Map<number, number>();
  for (const t of parameterTensors(model)) perLayer.set(t.layer, (perLayer.get(t.layer) ?? 0) + t.elements);
  let max = 0;
  for (const v of perLayer.values()) max = Math.max(max, v);
  return max;
}

/**
 * Parameters of the largest single module (a Linear's weight and bias, an embedding table, a norm) on one TP rank:
 * what DeepSpeed ZeRO-3 gathers at a time. Its hooks fetch and release each submodule's own parameters
 * (`partitioned_param_coordinator.py` fetch_sub_module / release_sub_module), and its memory estimator sizes the
 * largest layer as the largest `m.parameters(recurse=False)` (stage3.py `model_to_params`). A module is a tensor's
 * name up to its last `.`.
 */
export function largestModuleParameters(model: ModelSpec, tp = 1): number {
  const perModule = new Map<string, number>();
  for (const t of parameterTensors(model)) {
    const module = t.name.slice(0, t.name.lastIndexOf('.'));
    perModule.set(module, (perModule.get(module) ?? 0) + elementsPerTpRank(t, tp));
  }
  return Math.max(0, ...perModule.values());
}

/**
 * Megatron's last-stage copy of the word embeddings when there is a pipeline, for tied embeddings (that stage's LM
 * head) or multi-token prediction (the modules' embedding lookup, mtp.ts): a parameter of its own with the
 * embedding's shape, kept equal to the first stage's by an all-reduce of their gradients. Undefined otherwise.
 */
export function lastStageEmbeddingCopy(model: ModelSpec): ParamTensor | undefined {
  const embedding = parameterTensors(model).find((t) => t.layer < 0 && t.elements === model.vocab * model.hidden);
  return (model.tiedEmbeddings || mtpDepths(model) > 0) && embedding
    ? { ...embedding, name: `${embedding.name} (last-stage copy)`, layer: model.layers }
    : undefined;
}
