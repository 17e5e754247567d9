import { fail, intField, type Json } from './hfFields.js';
import type { MlaSpec } from './mla.js';
import type { MoeSpec } from './moe.js';

/** DeepSeek's `model_type`s: Llama-shaped blocks with latent attention and (past the first dense layers) experts. */
export const HF_DEEPSEEK_TYPES = ['deepseek_v2', 'deepseek_v3'] as const;

/** What a DeepSeek configuration gives beside the Llama fields: its latent attention, experts and MTP depths. */
export interface DeepseekParts {
  mla: MlaSpec;
  moe?: MoeSpec;
  /** num_nextn_predict_layers (DeepSeek-V3: 1); 0 where absent (V2). */
  mtpLayers: number;
}

/**
 * Defaults of `transformers`' DeepseekV2Config and DeepseekV3Config where a field is absent
 * (configuration_deepseek_v2.py and configuration_deepseek_v3.py): V2 has no dense first layers and two shared experts
 * by default, V3 three dense layers and one shared expert.
 */
const DEFAULTS: Record<(typeof HF_DEEPSEEK_TYPES)[number], { firstDense: number; shared: number }> = {
  deepseek_v2: { firstDense: 0, shared: 2 },
  deepseek_v3: { firstDense: 3, shared: 1 },
};

/** A count that may be 0 or null (null or absent: `fallback`). */
function countField(cfg: Json, key: string, sourcePath: string, fallback: number): number {
  const v = cfg[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
    fail(sourcePath, `field '${key}' is ${JSON.stringify(v)}; expected a whole number, 0 or more`);
  return v;
}

/**
 * Latent attention's widths. `q_lora_rank` null (DeepSeek-V2-Lite) projects the queries directly, as qLoraRank 0.
 * @throws ScenarioError naming the field
 */
function mlaOf(cfg: Json, sourcePath: string): MlaSpec {
  return {
    qLoraRank: countField(cfg, 'q_lora_rank', sourcePath, 0),
    kvLoraRank: intField(cfg, ['kv_lora_rank'], sourcePath),
    qkNopeHeadDim: intField(cfg, ['qk_nope_head_dim'], sourcePath),
    qkRopeHeadDim: intField(cfg, ['qk_rope_head_dim'], sourcePath),
    vHeadDim: intField(cfg, ['v_head_dim'], sourcePath),
  };
}

/**
 * The experts, as DeepseekV2/V3 build them: `n_routed_experts` of `moe_intermediate_size`, `num_experts_per_tok` a
 * token, `n_shared_experts` fused into one shared MLP of n × `moe_intermediate_size`, a dense MLP of
 * `intermediate_size` in the first `first_k_dense_replace` layers; `n_group` and `topk_group` its group-limited
 * routing. `n_routed_experts` null is a dense model.
 * DeepSeek's own modelling code also reads `moe_layer_freq` (experts every n-th layer); only 1 is modelled.
 * @throws ScenarioError naming the field
 */
function moeOf(cfg: Json, modelType: (typeof HF_DEEPSEEK_TYPES)[number], sourcePath: string): MoeSpec | undefined {
  if (cfg['n_routed_experts'] === null) return undefined;
  const freq = countField(cfg, 'moe_layer_freq', sourcePath, 1);
  if (freq !== 1)
    fail(sourcePath, `moe_layer_freq ${freq}: only experts in every layer after the dense first layers are modelled`);
  const width = intField(cfg, ['moe_intermediate_size'], sourcePath);
  const shared = countField(cfg, 'n_shared_experts', sourcePath, DEFAULTS[modelType].shared);
  const groups = countField(cfg, 'n_group', sourcePath, 1);
  const groupsPerToken = countField(cfg, 'topk_group', sourcePath, groups);
  return {
    ...(groups > 1 && groupsPerToken < groups ? { routingGroups: groups, groupsPerToken } : {}),
    experts: intField(cfg, ['n_routed_experts'], sourcePath),
    topK: intField(cfg, ['num_experts_per_tok'], sourcePath),
    expertFfnHidden: width,
    sharedExpertFfnHidden: shared * width,
    denseLayers: countField(cfg, 'first_k_dense_replace', sourcePath, DEFAULTS[modelType].firstDense),
  };
}

/**
 * A DeepSeek-V2 or -V3 configuration's latent attention and experts.
 * @throws ScenarioError naming the field
 */
export function hfDeepseek(
  cfg: Json,
  modelType: (typeof HF_DEEPSEEK_TYPES)[number],
  sourcePath: string,
): DeepseekParts {
  const moe = moeOf(cfg, modelType, sourcePath);
  const mtpLayers = countField(cfg, 'num_nextn_predict_layers', sourcePath, 0);
  return { mla: mlaOf(cfg, sourcePath), ...(moe ? { moe } : {}), mtpLayers };
}
