import { z } from 'zod';

const positiveInt = z.number().int().positive();
const count = z.number().int().min(0);

/**
 * A model's mixture-of-experts MLPs (src/sim/workload/moe.ts), `llama` models only: `experts` routed experts of which
 * each token takes `topK`, each of inner width `expertFfnHidden` (default the model's `ffnHidden`);
 * `sharedExpertFfnHidden` (default 0, none) the shared experts' width together; `denseLayers` (default 0) the first
 * layers that keep a dense MLP of `ffnHidden`. Over a preset the fields given replace the preset's.
 */
export const moeSchema = z
  .object({
    experts: positiveInt.optional(),
    topK: positiveInt.optional(),
    expertFfnHidden: positiveInt.optional(),
    sharedExpertFfnHidden: count.optional(),
    denseLayers: count.optional(),
  })
  .strict();

/** Multi-head latent attention (src/sim/workload/mla.ts), `llama` models: the widths DeepSeek's configs give. */
export const mlaSchema = z
  .object({
    qLoraRank: positiveInt,
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
 * (Megatron --moe-expert-capacity-factor), `padToCapacity` pads every expert to it (--moe-pad-expert-input-to-capacity).
 */
export const routingSchema = z
  .object({
    skew: z.number().min(0).default(0),
    tokensPerExpert: z.array(z.number().min(0)).min(1).optional(),
    capacityFactor: z.number().positive().optional(),
    padToCapacity: z.boolean().default(false),
  })
  .strict();
