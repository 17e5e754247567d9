import { llamaLayerPrefix, mtpDepths, mtpLayerIndex, mtpPrefix } from './mtp.js';
import { attentionWidth, headDim, type ModelSpec, type Push } from './model.js';
import { isMoeLayer, type MoeSpec } from './moe.js';
import { mlaQkHeadDim, type MlaSpec } from './mla.js';

/** A Llama-shaped model's tensors in registration order (LlamaForCausalLM, DeepseekV3ForCausalLM). */
export function llamaTensors(m: ModelSpec, push: Push): void {
  const h = m.hidden;
  push('model.embed_tokens.weight', m.vocab * h, -1, true);
  for (let i = 0; i < m.layers; i++) transformerLayerTensors(m, i, push);
  push('model.norm.weight', h, m.layers, false);
  if (!m.tiedEmbeddings) push('lm_head.weight', m.vocab * h, m.layers, true);
  for (let d = 0; d < mtpDepths(m); d++) mtpModuleTensors(m, d, push);
}

/**
 * One transformer layer: LlamaDecoderLayer.__init__ registers self_attn, mlp, input_layernorm,
 * post_attention_layernorm.
 */
function transformerLayerTensors(m: ModelSpec, i: number, push: Push): void {
  const h = m.hidden;
  const kv = m.kvHeads * headDim(m);
  const q = attentionWidth(m);
  const p = llamaLayerPrefix(m, i);
  if (m.mla) mlaTensors(m, m.mla, i, push);
  else {
    push(p + 'self_attn.q_proj.weight', h * q, i, true);
    push(p + 'self_attn.k_proj.weight', h * kv, i, true, { kv: h * kv });
    push(p + 'self_attn.v_proj.weight', h * kv, i, true, { kv: h * kv });
    push(p + 'self_attn.o_proj.weight', q * h, i, true);
  }
  if (isMoeLayer(m, i)) moeMlpTensors(m, m.moe!, i, push);
  else gatedMlpTensors(p + 'mlp.', h, m.ffnHidden, i, push);
  push(p + 'input_layernorm.weight', h, i, false);
  push(p + 'post_attention_layernorm.weight', h, i, false);
}

/**
 * Multi-token-prediction module d (mtp.ts), as Megatron-Core's MultiTokenPredictionLayer registers it: the norms of
 * the embedding and of the hidden state, the 2h → h projection of the two concatenated, a transformer layer like the
 * main model's, and its final norm. The embedding and output head are the main model's.
 */
function mtpModuleTensors(m: ModelSpec, depth: number, push: Push): void {
  const h = m.hidden;
  const i = mtpLayerIndex(m, depth);
  const p = mtpPrefix(depth);
  push(p + 'enorm.weight', h, i, false);
  push(p + 'hnorm.weight', h, i, false);
  push(p + 'eh_proj.weight', 2 * h * h, i, true);
  transformerLayerTensors(m, i, push);
  push(p + 'final_layernorm.weight', h, i, false);
}

/**
 * Latent attention's tensors, as DeepseekV3Attention registers them: the query's down-projection, its norm and
 * up-projection to every head's query (one projection where the queries are not compressed, qLoraRank 0); the keys' and
 * values' joint down-projection (with the shared rotary key), its norm and up-projection to every head's key and value;
 * the output projection.
 */
function mlaTensors(m: ModelSpec, mla: MlaSpec, i: number, push: Push): void {
  const h = m.hidden;
  const p = `${llamaLayerPrefix(m, i)}self_attn.`;
  if (mla.qLoraRank === 0) push(p + 'q_proj.weight', h * m.heads * mlaQkHeadDim(mla), i, true);
  else {
    push(p + 'q_a_proj.weight', h * mla.qLoraRank, i, false);
    push(p + 'q_a_layernorm.weight', mla.qLoraRank, i, false);
    push(p + 'q_b_proj.weight', mla.qLoraRank * m.heads * mlaQkHeadDim(mla), i, true);
  }
  push(p + 'kv_a_proj_with_mqa.weight', h * (mla.kvLoraRank + mla.qkRopeHeadDim), i, false);
  push(p + 'kv_a_layernorm.weight', mla.kvLoraRank, i, false);
  push(p + 'kv_b_proj.weight', mla.kvLoraRank * m.heads * (mla.qkNopeHeadDim + mla.vHeadDim), i, true);
  push(p + 'o_proj.weight', m.heads * mla.vHeadDim * h, i, true);
}

/** A SwiGLU MLP's three weights (gate, up, down) of inner width f under `prefix`. */
function gatedMlpTensors(prefix: string, h: number, f: number, layer: number, push: Push): void {
  push(prefix + 'gate_proj.weight', h * f, layer, true);
  push(prefix + 'up_proj.weight', h * f, layer, true);
  push(prefix + 'down_proj.weight', f * h, layer, true);
}

/**
 * A mixture-of-experts MLP: the router (E × h, whole on every TP rank, as Megatron-Core's TopKRouter keeps it), the
 * routed experts' fused gate/up and down weights (all E experts in one tensor each), and the shared experts' MLP.
 */
function moeMlpTensors(m: ModelSpec, moe: MoeSpec, i: number, push: Push): void {
  const h = m.hidden;
  const p = `${llamaLayerPrefix(m, i)}mlp.`;
  push(p + 'router.weight', moe.experts * h, i, false);
  push(p + 'experts.gate_up_proj.weight', moe.experts * h * 2 * moe.expertFfnHidden, i, true, { expert: true });
  push(p + 'experts.down_proj.weight', moe.experts * moe.expertFfnHidden * h, i, true, { expert: true });
  if (moe.sharedExpertFfnHidden > 0) gatedMlpTensors(p + 'shared_experts.', h, moe.sharedExpertFfnHidden, i, push);
}
