import { describe, expect, it } from 'vitest';
import { modelFromHfConfig } from '../../../src/sim/workload/hfConfig.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import { activeParameterCount, parameterTensors, parameterCount } from '../../../src/sim/workload/model.js';

/** deepseek-ai/DeepSeek-V3 config.json, the fields the reader uses (with transformers' saved head_dim 64). */
const DEEPSEEK_V3 = {
  model_type: 'deepseek_v3',
  first_k_dense_replace: 3,
  head_dim: 64,
  hidden_size: 7168,
  intermediate_size: 18432,
  kv_lora_rank: 512,
  max_position_embeddings: 163840,
  moe_intermediate_size: 2048,
  moe_layer_freq: 1,
  n_group: 8,
  n_routed_experts: 256,
  n_shared_experts: 1,
  num_attention_heads: 128,
  num_experts_per_tok: 8,
  num_hidden_layers: 61,
  num_key_value_heads: 128,
  num_nextn_predict_layers: 1,
  q_lora_rank: 1536,
  qk_nope_head_dim: 128,
  qk_rope_head_dim: 64,
  tie_word_embeddings: false,
  topk_group: 4,
  v_head_dim: 128,
  vocab_size: 129280,
};

/** deepseek-ai/DeepSeek-V2 config.json, likewise. */
const DEEPSEEK_V2 = {
  ...DEEPSEEK_V3,
  model_type: 'deepseek_v2',
  first_k_dense_replace: 1,
  hidden_size: 5120,
  intermediate_size: 12288,
  moe_intermediate_size: 1536,
  n_routed_experts: 160,
  n_shared_experts: 2,
  num_experts_per_tok: 6,
  num_hidden_layers: 60,
  num_nextn_predict_layers: undefined,
  topk_group: 3,
  vocab_size: 102400,
};

/** deepseek-ai/DeepSeek-V2-Lite config.json: queries not compressed (q_lora_rank null), no expert groups. */
const DEEPSEEK_V2_LITE = {
  ...DEEPSEEK_V2,
  hidden_size: 2048,
  intermediate_size: 10944,
  moe_intermediate_size: 1408,
  n_group: 1,
  n_routed_experts: 64,
  num_attention_heads: 16,
  num_hidden_layers: 27,
  num_key_value_heads: 16,
  q_lora_rank: null,
  topk_group: 1,
};

describe('Hugging Face DeepSeek configs', () => {
  it('read DeepSeek-V3 as the preset has it: 671B parameters, 37B active (its report, §1)', () => {
    const m = modelFromHfConfig(DEEPSEEK_V3, 'dsv3/config.json');
    const preset = modelPreset('deepseek-v3');
    expect(m.mla).toEqual(preset.mla);
    expect(m.moe).toEqual(preset.moe);
    expect(m.kvHeads).toBe(128);
    expect(m.headDim).toBeUndefined();
    expect(parameterCount(m)).toBe(parameterCount(preset));
    expect(m.mtpLayers).toBe(1);
    const main = { ...m, mtpLayers: 0 };
    expect(parameterCount(main) / 1e9).toBeCloseTo(671, -1);
    expect(activeParameterCount(main) / 1e9).toBeCloseTo(37, -0.5);
  });

  it(
    'read the multi-token prediction (num_nextn_predict_layers) ' +
      'and the group-limited routing (n_group, topk_group)',
    () => {
      const m = modelFromHfConfig(DEEPSEEK_V3, 'dsv3/config.json');
      expect(m.notModelled).toBeUndefined();
      expect(modelPreset('deepseek-v3').notModelled).toBeUndefined();
      expect(m.mtpLayers).toBe(1);
      expect(modelFromHfConfig({ ...DEEPSEEK_V3, num_nextn_predict_layers: 0 }, 'x').mtpLayers).toBeUndefined();
      expect([m.moe?.routingGroups, m.moe?.groupsPerToken]).toEqual([8, 4]);
      expect(modelPreset('deepseek-v3').moe).toEqual(m.moe);
    },
  );

  it('read DeepSeek-V2: 236B parameters, 21B active (DeepSeek-V2 paper, abstract), one dense layer', () => {
    const m = modelFromHfConfig(DEEPSEEK_V2, 'dsv2/config.json');
    expect(m.moe).toEqual({
      experts: 160,
      topK: 6,
      expertFfnHidden: 1536,
      sharedExpertFfnHidden: 2 * 1536,
      denseLayers: 1,
      routingGroups: 8,
      groupsPerToken: 3,
    });
    expect(Math.abs(parameterCount(m) / 236e9 - 1)).toBeLessThan(0.01);
    expect(Math.abs(activeParameterCount(m) / 21e9 - 1)).toBeLessThan(0.05);
  });

  it(
    'read DeepSeek-V2-Lite, whose queries are projected directly: ' +
      '15.7B parameters (DeepSeek-V2 paper, appendix B)',
    () => {
      const m = modelFromHfConfig(DEEPSEEK_V2_LITE, 'lite/config.json');
      expect(m.mla!.qLoraRank).toBe(0);
      const q = parameterTensors(m).filter((t) => t.name.startsWith('model.layers.0.self_attn.q'));
      expect(q.map((t) => [t.name, t.elements])).toEqual([['model.layers.0.self_attn.q_proj.weight', 2048 * 16 * 192]]);
      expect(Math.abs(parameterCount(m) / 15.7e9 - 1)).toBeLessThan(0.01);
      expect(m.notModelled).toBeUndefined();
    },
  );

  it('default the shared experts and dense layers as transformers does when the fields are absent', () => {
    const { n_shared_experts: _s, first_k_dense_replace: _f, ...bare } = DEEPSEEK_V3;
    expect(modelFromHfConfig(bare, 'a/config.json').moe).toMatchObject({ sharedExpertFfnHidden: 2048, denseLayers: 3 });
    const v2 = modelFromHfConfig({ ...bare, model_type: 'deepseek_v2' }, 'b/config.json').moe!;
    expect(v2).toMatchObject({ sharedExpertFfnHidden: 2 * 2048, denseLayers: 0 });
  });

  it('read n_routed_experts null as a dense model with latent attention', () => {
    const m = modelFromHfConfig({ ...DEEPSEEK_V2_LITE, n_routed_experts: null }, 'd/config.json');
    expect(m.moe).toBeUndefined();
    expect(m.mla).toBeDefined();
  });

  it('refuse experts every other layer and a negative count, naming the field', () => {
    expect(() => modelFromHfConfig({ ...DEEPSEEK_V3, moe_layer_freq: 2 }, 'e/config.json')).toThrow(
      /moe_layer_freq 2: only experts in every layer/,
    );
    expect(() => modelFromHfConfig({ ...DEEPSEEK_V3, first_k_dense_replace: -1 }, 'f/config.json')).toThrow(
      /field 'first_k_dense_replace' is -1; expected a whole number, 0 or more/,
    );
    expect(() => modelFromHfConfig({ ...DEEPSEEK_V3, kv_lora_rank: undefined }, 'g/config.json')).toThrow(
      /missing field 'kv_lora_rank'/,
    );
  });
});
