import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ScenarioError, UnknownPresetError } from '../../../src/sim/errors.js';
import { modelFromHfConfig } from '../../../src/sim/workload/hfConfig.js';
import {
  elementsPerTpRank,
  largestLayerParameters,
  parameterCount,
  parameterTensors,
  parametersPerTpRank,
} from '../../../src/sim/workload/model.js';
import { MODEL_PRESET_NAMES, modelPreset, modelPresetNames } from '../../../src/sim/workload/modelPresets.js';

function within(actual: number, expected: number, rel: number): void {
  expect(Math.abs(actual - expected) / expected).toBeLessThanOrEqual(rel);
}

describe('model presets', () => {
  it('include every requested model', () => {
    for (const n of [
      'gpt3-175b',
      'gpt3-1.3b',
      'gpt3-2.7b',
      'gpt3-6.7b',
      'gpt3-13b',
      'llama2-7b',
      'llama2-13b',
      'llama2-70b',
      'llama3-8b',
      'llama3-70b',
      'llama3-405b',
      'bert-large',
      'mlp-small',
    ]) {
      expect(modelPreset(n).name).toBe(n);
    }
    expect(modelPresetNames()).toEqual([...MODEL_PRESET_NAMES]);
  });

  it('rejects an unknown name with an error listing the allowed names', () => {
    expect(() => modelPreset('llama-7b')).toThrow(UnknownPresetError);
    try {
      modelPreset('llama-7b', 'model.preset');
    } catch (e) {
      const err = e as UnknownPresetError;
      expect(err).toBeInstanceOf(ScenarioError);
      expect(err.path).toBe('model.preset');
      expect(err.allowed).toContain('llama2-7b');
      expect(err.message).toContain('gpt3-175b');
    }
  });

  it('returns copies that callers may change freely', () => {
    const a = modelPreset('mlp-small');
    a.mlpSizes![0] = 7;
    a.layers = 99;
    expect(modelPreset('mlp-small').mlpSizes).toEqual([1024, 512, 10]);
    expect(modelPreset('mlp-small').layers).toBe(2);
  });

  it('have heads dividing the width and kv heads dividing the heads', () => {
    for (const n of MODEL_PRESET_NAMES) {
      const m = modelPreset(n);
      expect(m.hidden % m.heads).toBe(0);
      expect(m.heads % m.kvHeads).toBe(0);
    }
  });
});

describe('parameter counts', () => {
  it('match the exact Hugging Face counts of Llama 2 7B and 70B', () => {
    // LlamaForCausalLM(...).num_parameters() for the published configs.
    expect(parameterCount(modelPreset('llama2-7b'))).toBe(6_738_415_616);
    expect(parameterCount(modelPreset('llama2-70b'))).toBe(68_976_648_192);
  });

  it('match the published sizes within 1%', () => {
    within(parameterCount(modelPreset('gpt3-175b')), 175e9, 0.01);
    within(parameterCount(modelPreset('llama2-13b')), 13.0e9, 0.01);
    within(parameterCount(modelPreset('llama3-8b')), 8.03e9, 0.01);
    within(parameterCount(modelPreset('llama3-70b')), 70.6e9, 0.01);
    within(parameterCount(modelPreset('llama3-405b')), 405.9e9, 0.01);
    within(parameterCount(modelPreset('gpt3-6.7b')), 6.7e9, 0.01);
    within(parameterCount(modelPreset('megatron-gpt-145.6b')), 145.6e9, 0.01);
    within(parameterCount(modelPreset('megatron-gpt-1t')), 1008e9, 0.01);
    // mlp-small: 1024·512 + 512 + 512·10 + 10.
    expect(parameterCount(modelPreset('mlp-small'))).toBe(529_930);
  });

  it('put bert-large between 335M and 340M', () => {
    const n = parameterCount(modelPreset('bert-large'));
    expect(n).toBeGreaterThanOrEqual(335e6);
    expect(n).toBeLessThanOrEqual(340e6);
  });

  it('list tensors in registration order with unique names', () => {
    for (const name of MODEL_PRESET_NAMES) {
      const ts = parameterTensors(modelPreset(name));
      expect(new Set(ts.map((t) => t.name)).size).toBe(ts.length);
      const layers = ts.map((t) => t.layer);
      for (let i = 1; i < layers.length; i++) expect(layers[i]).toBeGreaterThanOrEqual(layers[i - 1]);
    }
    const llama = parameterTensors(modelPreset('llama2-7b'));
    expect(llama[0].name).toBe('model.embed_tokens.weight');
    expect(llama[1].name).toBe('model.layers.0.self_attn.q_proj.weight');
    expect(llama[llama.length - 1].name).toBe('lm_head.weight');
    const gpt = parameterTensors(modelPreset('gpt3-1.3b'));
    expect(gpt.map((t) => t.name)).not.toContain('lm_head.weight');
    expect(gpt[gpt.length - 1].name).toBe('transformer.ln_f.bias');
  });

  it('split sharded tensors over tensor-parallel ranks', () => {
    const m = modelPreset('llama2-7b');
    const full = parameterCount(m);
    const perRank = parametersPerTpRank(m, 8);
    const replicated = parameterTensors(m)
      .filter((t) => !t.tpSharded)
      .reduce((s, t) => s + t.elements, 0);
    expect(perRank).toBeCloseTo((full - replicated) / 8 + replicated, 0);
    expect(largestLayerParameters(m)).toBe(202_383_360); // one layer beats the 131M embedding table
    // head + final norm, with a 128k vocab
    expect(largestLayerParameters(modelPreset('llama3-8b'))).toBe(128256 * 4096 + 4096);
  });

  it(
    'past tp = key/value heads, give each rank a copy of ' + "one head's share of K and V (what the step simulates)",
    () => {
      const m = modelPreset('llama2-70b'); // 8 KV heads of 128
      const kv = 8 * 128;
      const layer = (tp: number) => parametersPerTpRank(m, tp, (l) => l === 0);
      // tp 8: everything sharded splits 8 ways; tp 16: all but K and V 16 ways, and K and V (h × kv each) 8 ways.
      const sharded = parameterTensors(m)
        .filter((t) => t.layer === 0 && t.tpSharded)
        .reduce((a, t) => a + t.elements, 0);
      const whole = parameterTensors(m)
        .filter((t) => t.layer === 0 && !t.tpSharded)
        .reduce((a, t) => a + t.elements, 0);
      expect(layer(8)).toBe(sharded / 8 + whole);
      expect(layer(16)).toBe((sharded - 2 * m.hidden * kv) / 16 + (2 * m.hidden * kv) / 8 + whole);
      // GPT's fused QKV with grouped KV heads: its K and V columns alike.
      const gqa = { ...modelPreset('gpt3-1.3b'), kvHeads: 4 };
      const qkv = parameterTensors(gqa).find((t) => t.name === 'transformer.h.0.attn.c_attn.weight')!;
      const h = gqa.hidden;
      const kvCols = 2 * 4 * (h / gqa.heads);
      expect(qkv.kv).toEqual({ elements: h * kvCols, heads: 4 });
      expect(elementsPerTpRank(qkv, 8)).toBe((h * h) / 8 + (h * kvCols) / 4);
      expect(elementsPerTpRank(qkv, 4)).toBe((h * (h + kvCols)) / 4);
    },
  );
});

describe('Hugging Face config.json', () => {
  it('reads a Llama config into the same model as the preset', () => {
    const json = JSON.parse(readFileSync('scenarios/models/llama2-7b.config.json', 'utf8'));
    const m = modelFromHfConfig(json, 'scenarios/models/llama2-7b.config.json');
    const preset = modelPreset('llama2-7b');
    expect({ ...m, name: preset.name }).toEqual(preset);
    expect(m.name).toBe('meta-llama/Llama-2-7b-hf');
  });

  it('reads GPT-2 field names, with n_inner null meaning 4·n_embd and tied embeddings by default', () => {
    const m = modelFromHfConfig(
      { model_type: 'gpt2', n_layer: 12, n_embd: 768, n_head: 12, n_inner: null, n_positions: 1024, vocab_size: 50257 },
      'models/gpt2/config.json',
    );
    expect(m).toMatchObject({
      arch: 'gpt',
      layers: 12,
      hidden: 768,
      heads: 12,
      kvHeads: 12,
      ffnHidden: 3072,
      seqLen: 1024,
    });
    expect(m.tiedEmbeddings).toBe(true);
    expect(m.name).toBe('gpt2');
    // GPT-2 small has 124,439,808 parameters.
    expect(parameterCount(m)).toBe(124_439_808);
  });

  it('reads grouped-query attention from num_key_value_heads', () => {
    const m = modelFromHfConfig(
      {
        model_type: 'mistral',
        num_hidden_layers: 32,
        hidden_size: 4096,
        num_attention_heads: 32,
        num_key_value_heads: 8,
        intermediate_size: 14336,
        max_position_embeddings: 32768,
        vocab_size: 32000,
      },
      'mistral.json',
    );
    expect(m).toMatchObject({ arch: 'llama', kvHeads: 8, tiedEmbeddings: false });
    within(parameterCount(m), 7.24e9, 0.01); // Mistral 7B
  });

  it(
    'sizes the attention projections by head_dim where it is not ' +
      'hidden_size / num_attention_heads (published parameter counts)',
    () => {
      // mistralai/Mistral-Nemo-Base-2407 config.json: 32 heads of 128 on a width of 5120 (q_proj 5120 → 4096); 12.2B
      // parameters on its model page. Sized from 160-wide heads it would count 13.3B.
      const nemo = modelFromHfConfig(
        {
          model_type: 'mistral',
          num_hidden_layers: 40,
          hidden_size: 5120,
          num_attention_heads: 32,
          head_dim: 128,
          num_key_value_heads: 8,
          intermediate_size: 14336,
          max_position_embeddings: 1024000,
          vocab_size: 131072,
        },
        'nemo.json',
      );
      expect(nemo.headDim).toBe(128);
      within(parameterCount(nemo), 12.2e9, 0.01);
      // Qwen/Qwen3-32B config.json: 64 heads of 128 on 5120 (q_proj 5120 → 8192); 32.8B parameters on its model page.
      const qwen = modelFromHfConfig(
        {
          model_type: 'qwen3',
          num_hidden_layers: 64,
          hidden_size: 5120,
          num_attention_heads: 64,
          head_dim: 128,
          num_key_value_heads: 8,
          intermediate_size: 25600,
          max_position_embeddings: 40960,
          vocab_size: 151936,
          tie_word_embeddings: false,
        },
        'qwen3.json',
      );
      within(parameterCount(qwen), 32.8e9, 0.01);
      // google/gemma-7b config.json: 16 heads of 256 on 3072, tied embeddings by default; 8.54B
      // parameters (Gemma report, Table 2).
      const gemma = modelFromHfConfig(
        {
          model_type: 'gemma',
          num_hidden_layers: 28,
          hidden_size: 3072,
          num_attention_heads: 16,
          head_dim: 256,
          num_key_value_heads: 16,
          intermediate_size: 24576,
          max_position_embeddings: 8192,
          vocab_size: 256000,
        },
        'gemma.json',
      );
      expect(gemma.tiedEmbeddings).toBe(true);
      within(parameterCount(gemma), 8.54e9, 0.01);
      // meta-llama/Llama-3.1-8B config.json states head_dim 128 = 4096 / 32: the same model as without it.
      const llama31 = modelFromHfConfig(
        {
          model_type: 'llama',
          num_hidden_layers: 32,
          hidden_size: 4096,
          num_attention_heads: 32,
          head_dim: 128,
          num_key_value_heads: 8,
          intermediate_size: 14336,
          max_position_embeddings: 131072,
          vocab_size: 128256,
        },
        'llama31.json',
      );
      expect(llama31).not.toHaveProperty('headDim');
      within(parameterCount(llama31), 8.03e9, 0.005);
    },
  );

  it('reads BERT configs', () => {
    const m = modelFromHfConfig(
      {
        model_type: 'bert',
        num_hidden_layers: 24,
        hidden_size: 1024,
        num_attention_heads: 16,
        intermediate_size: 4096,
        max_position_embeddings: 512,
        vocab_size: 30522,
      },
      'bert.json',
    );
    expect({ ...m, name: 'bert-large' }).toEqual(modelPreset('bert-large'));
  });

  it('names the missing field in its error', () => {
    const cfg = {
      model_type: 'llama',
      hidden_size: 4096,
      num_attention_heads: 32,
      intermediate_size: 11008,
      max_position_embeddings: 4096,
      vocab_size: 32000,
    };
    expect(() => modelFromHfConfig(cfg, 'x/config.json')).toThrow(ScenarioError);
    expect(() => modelFromHfConfig(cfg, 'x/config.json')).toThrow(/num_hidden_layers.*n_layer/);
    try {
      modelFromHfConfig(cfg, 'x/config.json');
    } catch (e) {
      expect((e as ScenarioError).path).toBe('x/config.json');
    }
  });

  it('rejects unsupported model types, bad values and non-objects', () => {
    expect(() => modelFromHfConfig({ model_type: 't5' }, 'c.json')).toThrow(/model_type 't5' is not supported/);
    expect(() => modelFromHfConfig({ n_layer: 2 }, 'c.json')).toThrow(/missing field 'model_type'/);
    expect(() => modelFromHfConfig([], 'c.json')).toThrow(ScenarioError);
    expect(() =>
      modelFromHfConfig(
        {
          model_type: 'gpt2',
          n_layer: '12',
          n_embd: 768,
          n_head: 12,
          n_positions: 1024,
          vocab_size: 50257,
        },
        'c.json',
      ),
    ).toThrow(/'n_layer' is "12"; expected a positive integer/);
    expect(() =>
      modelFromHfConfig(
        {
          model_type: 'gpt2',
          n_layer: 12,
          n_embd: 770,
          n_head: 12,
          n_positions: 1024,
          vocab_size: 50257,
        },
        'c.json',
      ),
    ).toThrow(/not a multiple/);
  });
});
