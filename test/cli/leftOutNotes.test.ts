import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

/** DeepSeek-V3's config.json fields (deepseek-ai/DeepSeek-V3), saved where a scenario can name it. */
function deepseekV3Scenario(): string {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-dsv3-'));
  const config = {
    model_type: 'deepseek_v3',
    first_k_dense_replace: 3,
    hidden_size: 7168,
    intermediate_size: 18432,
    kv_lora_rank: 512,
    max_position_embeddings: 163840,
    moe_intermediate_size: 2048,
    n_group: 8,
    n_routed_experts: 256,
    n_shared_experts: 1,
    num_attention_heads: 128,
    num_experts_per_tok: 8,
    num_hidden_layers: 61,
    num_nextn_predict_layers: 1,
    q_lora_rank: 1536,
    qk_nope_head_dim: 128,
    qk_rope_head_dim: 64,
    topk_group: 4,
    v_head_dim: 128,
    vocab_size: 129280,
  };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  const scenario = [
    'name: dsv3-import',
    'cluster: { preset: hgx-h800, nodes: 256 }',
    'model: { hfConfig: config.json }',
    'training: { globalBatch: 15360, microBatch: 1, seqLen: 4096 }',
    'parallel: { pp: 16, ep: 64, zero: 1, recompute: full, layersPerStage: [3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2] }',
  ].join('\n');
  writeFileSync(join(dir, 's.yaml'), scenario);
  return join(dir, 's.yaml');
}

describe('what a model leaves out', () => {
  it('is named by memory, in its text and its JSON, for an imported DeepSeek-V3', async () => {
    const file = deepseekV3Scenario();
    const text = await cli('memory', file);
    expect(text.code).toBe(0);
    expect(text.out.replace(/\s+/g, ' ')).toMatch(
      /Note: config: not modelled, so not in the step or memory: the multi-token-prediction module/,
    );
    const json = await cli('memory', file, '--json');
    expect(JSON.parse(json.out).notModelled).toHaveLength(1);
  });

  it('is not claimed for a model that leaves nothing out', async () => {
    const { out } = await cli('memory', 'scenarios/llama2-70b-zero2-8xa100.yaml', '--json');
    expect(JSON.parse(out).notModelled).toBeUndefined();
  });
});
