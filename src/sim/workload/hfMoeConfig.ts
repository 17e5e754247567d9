import { ScenarioError } from '../errors.js';
import { intField, type Json } from './hfFields.js';
import type { MoeSpec } from './moe.js';

/**
 * The `model_type`s whose configuration classes describe mixture-of-experts MLPs, read as `llama` models with experts.
 */
export const HF_MOE_TYPES = ['mixtral', 'qwen2_moe', 'qwen3_moe', 'gpt_oss'] as const;

/**
 * The experts of a configuration, per `transformers`' classes: MixtralConfig and GptOssConfig (`num_local_experts`,
 * `num_experts_per_tok`, each expert `intermediate_size` wide, in every layer); Qwen2MoeConfig and Qwen3MoeConfig
 * (`num_experts`, `num_experts_per_tok`, `moe_intermediate_size`, Qwen2-MoE's `shared_expert_intermediate_size`,
 * experts every `decoder_sparse_step` layers except `mlp_only_layers`). Only experts in every layer, or after dense
 * first layers, are modelled; another pattern is refused.
 * @throws ScenarioError naming the field
 */
export function hfMoe(cfg: Json, modelType: string, sourcePath: string): MoeSpec {
  if (modelType === 'mixtral' || modelType === 'gpt_oss') {
    return {
      experts: intField(cfg, ['num_local_experts'], sourcePath),
      topK: intField(cfg, ['num_experts_per_tok'], sourcePath, modelType === 'mixtral' ? 2 : undefined),
      expertFfnHidden: intField(cfg, ['intermediate_size'], sourcePath),
      sharedExpertFfnHidden: 0,
      denseLayers: 0,
    };
  }
  const step = intField(cfg, ['decoder_sparse_step'], sourcePath, 1);
  const dense = Array.isArray(cfg['mlp_only_layers']) ? (cfg['mlp_only_layers'] as unknown[]) : [];
  const denseFirst = dense.every((l, i) => l === i);
  if (step !== 1 || !denseFirst)
    throw new ScenarioError(
      sourcePath,
      `experts every ${step} layers${dense.length > 0 ? ` with dense layers ${JSON.stringify(dense)}` : ''}: ` +
        'only experts in every layer after dense first layers are modelled',
    );
  const shared = cfg['shared_expert_intermediate_size'];
  return {
    experts: intField(cfg, ['num_experts'], sourcePath),
    topK: intField(cfg, ['num_experts_per_tok'], sourcePath),
    expertFfnHidden: intField(cfg, ['moe_intermediate_size'], sourcePath),
    sharedExpertFfnHidden:
      typeof shared === 'number' && shared > 0 ? intField(cfg, ['shared_expert_intermediate_size'], sourcePath) : 0,
    denseLayers: dense.length,
  };
}
