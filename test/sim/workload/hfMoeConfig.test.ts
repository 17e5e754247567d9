import { describe, expect, it } from 'vitest';
import { modelFromHfConfig } from '../../../src/sim/workload/hfConfig.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import { activeParameterCount, parameterCount } from '../../../src/sim/workload/model.js';

/** mistralai/Mixtral-8x7B-v0.1 config.json, the fields the reader uses. */
const MIXTRAL = {
  model_type: 'mixtral',
  hidden_size: 4096,
  intermediate_size: 14336,
  max_position_embeddings: 32768,
  num_attention_heads: 32,
  num_experts_per_tok: 2,
  num_hidden_layers: 32,
  num_key_value_heads: 8,
  num_local_experts: 8,
  tie_word_embeddings: false,
  vocab_size: 32000,
};

/** Qwen/Qwen3-30B-A3B config.json, likewise. */
const QWEN3_MOE = {
  model_type: 'qwen3_moe',
  decoder_sparse_step: 1,
  head_dim: 128,
  hidden_size: 2048,
  intermediate_size: 6144,
  max_position_embeddings: 40960,
  mlp_only_layers: [],
  moe_intermediate_size: 768,
  num_attention_heads: 32,
  num_experts: 128,
  num_experts_per_tok: 8,
  num_hidden_layers: 48,
  num_key_value_heads: 4,
  tie_word_embeddings: false,
  vocab_size: 151936,
};

describe('Hugging Face configs with experts', () => {
  it('read Mixtral as the preset has it: 46.7B parameters, 12.9B active', () => {
    const m = modelFromHfConfig(MIXTRAL, 'mixtral/config.json');
    expect(m.moe).toEqual({ experts: 8, topK: 2, expertFfnHidden: 14336, sharedExpertFfnHidden: 0, denseLayers: 0 });
    expect(parameterCount(m)).toBe(parameterCount(modelPreset('mixtral-8x7b')));
    expect(activeParameterCount(m) / 1e9).toBeCloseTo(12.9, 1);
  });

  it('read Qwen3-MoE with its expert width and head width as the preset has them', () => {
    const m = modelFromHfConfig(QWEN3_MOE, 'qwen3/config.json');
    expect(parameterCount(m)).toBe(parameterCount(modelPreset('qwen3-30b-a3b')));
  });

  it('read dense first layers and Qwen2-MoE shared experts', () => {
    const m = modelFromHfConfig(
      { ...QWEN3_MOE, model_type: 'qwen2_moe', mlp_only_layers: [0, 1], shared_expert_intermediate_size: 5632 },
      'q/config.json',
    );
    expect(m.moe!.denseLayers).toBe(2);
    expect(m.moe!.sharedExpertFfnHidden).toBe(5632);
  });

  it('refuse what is not modelled, naming it', () => {
    expect(() => modelFromHfConfig({ ...QWEN3_MOE, decoder_sparse_step: 2 }, 'q/config.json')).toThrow(
      /experts every 2 layers: only experts in every layer after dense first layers are modelled/,
    );
    expect(() => modelFromHfConfig({ ...QWEN3_MOE, mlp_only_layers: [3] }, 'q/config.json')).toThrow(
      /with dense layers \[3\]/,
    );
  });
});
