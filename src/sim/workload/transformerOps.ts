import { llamaLayerPrefix, mtpDepths, mtpLayerIndex } from './mtp.js';
import { mtpHeadBlock, mtpInputBlock } from './mtpOps.js';
import { attentionStage } from './attentionOps.js';
import { embeddingBlock, headBlock } from './headOps.js';
import { activationStage, layerContext, normStage, residualStage, type LayerContext } from './layerContext.js';
import { megatronGptEdges, megatronGptLayer } from './megatronOps.js';
import { buildMlpBlocks } from './mlpOps.js';
import { fp8LinearStage, type Fp8Input } from './fp8.js';
import type { ModelSpec } from './model.js';
import { assembleBlock, linearStage, type Block, type MicroBatchShape, type Op, type Stage } from './ops.js';
import { isMoeLayer } from './moe.js';
import { mlaProjectionStages } from './mlaOps.js';
import { attentionWidth } from './model.js';
import { routedExpertStages, sharedExpertAddStage } from './moeOps.js';

export type { Block, GemmShape, AttentionShape, MicroBatchShape, Op, OpKind, RecomputeMode } from './ops.js';

/** Tensor names of one layer's parameter groups, matching `parameterTensors`. */
interface LayerParams {
  ln1: string[];
  qkv: string[];
  proj: string[];
  ln2: string[];
  fc1: string[];
  fc2: string[];
}

function layerParams(model: ModelSpec, i: number): LayerParams {
  const wb = (p: string): string[] => [`${p}.weight`, `${p}.bias`];
  switch (model.arch) {
    case 'llama': {
      const p = llamaLayerPrefix(model, i);
      // A layer with experts has its shared experts' MLP where a dense layer has its MLP (moe.ts).
      const mlp = isMoeLayer(model, i) ? 'mlp.shared_experts.' : 'mlp.';
      return {
        ln1: [p + 'input_layernorm.weight'],
        qkv: ['q_proj', 'k_proj', 'v_proj'].map((n) => `${p}self_attn.${n}.weight`),
        proj: [p + 'self_attn.o_proj.weight'],
        // Latent attention's projections name their own tensors (mlaOps.ts).
        ln2: [p + 'post_attention_layernorm.weight'],
        fc1: [p + mlp + 'gate_proj.weight', p + mlp + 'up_proj.weight'],
        fc2: [p + mlp + 'down_proj.weight'],
      };
    }
    case 'bert': {
      const p = `bert.encoder.layer.${i}.`;
      return {
        ln1: wb(p + 'attention.output.LayerNorm'),
        qkv: [...wb(p + 'attention.self.query'), ...wb(p + 'attention.self.key'), ...wb(p + 'attention.self.value')],
        proj: wb(p + 'attention.output.dense'),
        ln2: wb(p + 'output.LayerNorm'),
        fc1: wb(p + 'intermediate.dense'),
        fc2: wb(p + 'output.dense'),
      };
    }
    default: {
      const p = `transformer.h.${i}.`;
      return {
        ln1: wb(p + 'ln_1'),
        qkv: wb(p + 'attn.c_attn'),
        proj: wb(p + 'attn.c_proj'),
        ln2: wb(p + 'ln_2'),
        fc1: wb(p + 'mlp.c_fc'),
        fc2: wb(p + 'mlp.c_proj'),
      };
    }
  }
}

/**
 * One transformer layer on one TP rank, Megatron's split (Shoeybi et al. 2019): QKV and fc1
 * column-parallel (output width ÷ t), proj and fc2 row-parallel (input width ÷ t). Pre-LN for GPT and
 * Llama; post-LN for BERT (Devlin et al. 2019): norm after each residual add.
 */
function transformerLayer(c: LayerContext, i: number, shape: MicroBatchShape): Block {
  const recompute = shape.recompute;
  const m = c.model;
  const names = layerParams(m, i);
  if (c.fw && m.arch === 'gpt') return megatronGptLayer(c, i, names, recompute);
  const T = c.tokens;
  const qkvOut = (c.headsPerRank + 2 * c.kvHeadsPerRank) * c.headDim;
  const attnWidth = attentionWidth(m) / c.tp;
  // SwiGLU's gate and up as one fused GEMM (Megatron): fc1's output is 2f wide.

  // Under FP8 the pre-norm layers' QKV and fc1 take their input from the norm fused with its cast (fp8.ts).
  const afterNorm: Fp8Input = m.arch === 'bert' ? 'tensor' : 'norm';
  const linear = (name: string, inF: number, outF: number, params: string[], input: Fp8Input) =>
    c.fp8
      ? fp8LinearStage({ name, tokens: T, inF, outF, params, input }, c.fp8.recipe)
      : linearStage(name, T, inF, outF, c.dtype, params);
  const qkv: Stage[] = m.mla ? mlaProjectionStages(c, m.mla, i) : [linear('qkv', c.h, qkvOut, names.qkv, afterNorm)];
  const attn = attentionStage(c);
  const proj = linear('proj', attnWidth, c.h, names.proj, 'tensor');
  const res1 = residualStage('residual1', c);
  const mlpStages = (ffnPerRank: number): Stage[] => [
    linear('fc1', c.h, (c.gated ? 2 : 1) * ffnPerRank, names.fc1, afterNorm),
    activationStage(c, c.tokens, ffnPerRank),
    linear('fc2', ffnPerRank, c.h, names.fc2, 'tensor'),
  ];
  const moe = m.moe && isMoeLayer(m, i) ? m.moe : undefined;
  // A layer with experts: the routed experts, then the shared experts (a dense MLP on every token) added to them.
  const mlp = moe
    ? [
        ...routedExpertStages(c, {
          moe,
          layer: i,
          ep: shape.ep ?? 1,
          etp: shape.etp ?? c.tp,
          loadFactor: shape.expertLoadFactors?.[i] ?? 1,
          dispatcher: shape.dispatcher,
        }),
        ...(moe.sharedExpertFfnHidden > 0
          ? [...mlpStages(moe.sharedExpertFfnHidden / c.tp), sharedExpertAddStage(c)]
          : []),
      ]
    : mlpStages(c.ffnPerRank);
  const res2 = residualStage('residual2', c);
  const ln1 = normStage('ln1', c, names.ln1);
  const ln2 = normStage('ln2', c, names.ln2);

  const stages: Stage[] =
    m.arch === 'bert'
      ? [...qkv, attn, proj, res1, ln1, ...mlp, res2, ln2]
      : [ln1, ...qkv, attn, proj, res1, ln2, ...mlp, res2];

  let again: Op[] = [];
  if (recompute === 'full') {
    // Korthikanti et al. 2022 §4: full recompute keeps only the layer input and re-runs the whole
    // forward at the start of the layer's backward.
    for (const s of stages) again.push(...s.forward);
  } else if (recompute === 'selective') {
    // Selective recompute re-runs only the attention core (QKᵀ, softmax, dropout, ·V).
    again = attn.core;
  }
  return assembleBlock(`layer.${i}`, i, stages, again);
}

/**
 * The work of one micro-batch on one rank, block by block: embedding (layer −1), each transformer
 * layer, final norm + LM head + loss (layer `model.layers`), then each multi-token-prediction module's input, layer and
 * head (layer `model.layers` + 1 + d). For `mlp` models: one block per linear.
 * Every trainable tensor appears exactly once in some backward op's `gradParams`.
 * @throws ScenarioError when t does not divide the heads or a size is invalid
 */
export function buildBlocks(model: ModelSpec, shape: MicroBatchShape): Block[] {
  if (model.arch === 'mlp') return buildMlpBlocks(model, shape);
  const c = layerContext(model, shape);
  const megatron = c.fw !== undefined && model.arch === 'gpt';
  const edge = (b: Block) => (megatron ? megatronGptEdges(b, c) : b);
  const blocks: Block[] = [edge(embeddingBlock(c))];
  for (let i = 0; i < model.layers; i++) blocks.push(transformerLayer(c, i, shape));
  blocks.push(edge(headBlock(c)));
  // Multi-token prediction (mtp.ts): each module after the head, with the head on the last stage.
  for (let d = 0; d < mtpDepths(model); d++)
    blocks.push(mtpInputBlock(c, d), transformerLayer(c, mtpLayerIndex(model, d), shape), mtpHeadBlock(c, d));
  return blocks;
}
