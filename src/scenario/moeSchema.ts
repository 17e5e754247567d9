import { z } from 'zod';

const positiveInt = z.number().int().positive();
const count = z.number().int().min(0);

/**
 * A model's mixture-of-experts MLPs (src/sim/workload/moe.ts), `llama` models only: `experts` routed experts of which
 * each token takes `topK`, each of inner width `expertFfnHidden` (default the model's `ffnHidden`);
 * `sharedExpertFfnHidden` (default 0, none) the shared experts' width together; `denseLayers` (default 0) the first
 * layers that keep a dense MLP of `ffnHidden`; `routingGroups` and `groupsPerToken` group-limited routing (DeepSeek's
 * n_group / topk_group, Megatron --moe-router-num-groups / --moe-router-group-topk: each token's experts come from
 * groupsPerToken of routingGroups equal groups; default one group). Over a preset the fields given replace the
 * preset's.
 */
export const moeSchema = z
  .object({
    experts: positiveInt.optional(),
    topK: positiveInt.optional(),
    expertFfnHidden: positiveInt.optional(),
    sharedExpertFfnHidden: count.optional(),
    denseLayers: count.optional(),
    routingGroups: positiveInt.optional(),
    groupsPerToken: positiveInt.optional(),
  })
  .strict();

/** Multi-head latent attention (src/sim/workload/mla.ts), `llama` models: the widths DeepSeek's configs give. */
export const mlaSchema = z
  .object({
    /** The query latent's width; 0: the queries are projected directly (DeepSeek-V2-Lite, q_lora_rank null). */
    qLoraRank: count,
    kvLoraRank: positiveInt,
    qkNopeHeadDim: positiveInt,
    qkRopeHeadDim: positiveInt,
    vHeadDim: positiveInt,
  })
  .strict();

/**
 * How a model with experts routes its tokens (src/sim/workload/routing.ts): `skew` σ ≥ 0 draws each layer's expert
 * popularity as log-normal weights from the seed (0, the default: balanced); `tokensPerExpert` a measured histogram,
 * one count per expert; `capacityFactor` caps each expert at that multiple of its balanced share and drops the rest
 * (Megatron --moe-expert-capacity-factor), `padToCapacity` pads every expert to it
 * (--moe-pad-expert-input-to-capacity).
 */
export const routingSchema = z
  .object({
    skew: z.number().min(0).default(0),
    tokensPerExpert: z.array(z.number().min(0)).min(1).optional(),
    capacityFactor: z.number().positive().optional(),
    padToCapacity: z.boolean().default(false),
  })
  .strict();

/** The parallel section's expert fields. */
export const expertParallelShape = {
  /**
   * Expert-parallel size (Megatron --expert-model-parallel-size) for a model with experts: each of ep ranks holds
   * experts / ep of every MoE layer's experts, and tokens reach them by all-to-all. The experts keep the attention's
   * tp (Megatron's default --expert-tensor-parallel-size), so ep divides dp × cp. Default 1.
   */
  ep: positiveInt.optional(),
  /**
   * Expert tensor-parallel size (Megatron --expert-tensor-parallel-size); default tp. Another value folds the experts
   * over the stage's tp × cp × dp ranks apart from attention's (MoE parallel folding): etp × ep divides tp × cp × dp.
   */
  etp: positiveInt.optional(),
  /**
   * How tokens reach their experts: `alltoall` (default), Megatron-Core's alltoall token dispatcher, an NCCL all-to-all
   * of every token's k copies; `deepep`, DeepEP's normal kernels (Megatron --moe-token-dispatcher-type flex
   * --moe-flex-dispatcher-backend deepep), each token sent once to each node and GPU its experts are on, over the
   * network to the rail's GPU and on over NVLink. NVIDIA GPUs with NVLink, ep > 1 and etp 1 only.
   */
  dispatcher: z.enum(['alltoall', 'deepep']).optional(),
  /**
   * Combined 1F1B (Megatron-Core --overlap-moe-expert-parallel-comm; DeepSeek's DualPipe overlaps likewise): the
   * forward of one micro-batch and the backward of another run as one step, layer against layer, so that each one's
   * dispatch and combine are in flight while the other computes. Over a pipeline with the interleaved schedule only,
   * as Megatron asks for a virtual pipeline. Default false.
   */
  moeOverlap: z.boolean().optional(),
};

/** The model section's fields for experts, latent attention and multi-token prediction. */
export const modelExpertShape = {
  /** Mixture-of-experts MLPs. */
  moe: moeSchema.optional(),
  /** Multi-head latent attention (DeepSeek): all five widths; split over tp as Megatron-Core does; cp 1 only. */
  mla: mlaSchema.optional(),
  /**
   * Multi-token-prediction depths (DeepSeek-V3 §2.2; Megatron --mtp-num-layers; HF num_nextn_predict_layers): each one
   * more transformer layer and output-head pass on the last pipeline stage. `llama` models, tp 1, cp 1; default 0.
   */
  mtpLayers: count.optional(),
};

/** The training section's routing of a model with experts; absent: balanced and dropless. */
export const trainingExpertShape = { routing: routingSchema.optional() };
