import type { ExpertRouting } from './routeSpread.js';
import { mtpDepthOf } from './mtp.js';

/**
 * Mixture-of-experts MLPs (Shazeer et al. 2017; Fedus et al., "Switch Transformers", 2021; Megatron-Core's MoELayer):
 * a router picks `topK` of `experts` routed experts for each token, each a SwiGLU MLP of `expertFfnHidden`; shared
 * experts, where the model has them, see every token. Dropless routing (Megatron-Core's default, no capacity factor):
 * every routed token is computed.
 */
export interface MoeSpec {
  /** Routed experts E (Megatron --num-experts, HF num_local_experts / num_experts / n_routed_experts). */
  experts: number;
  /** Experts each token is routed to, k (--moe-router-topk, HF num_experts_per_tok). */
  topK: number;
  /** Inner width of one routed expert's MLP, per matrix (--moe-ffn-hidden-size, HF moe_intermediate_size). */
  expertFfnHidden: number;
  /**
   * Inner width of the shared experts together, per matrix, 0 when there are none (--moe-shared-expert-intermediate-
   * size; HF shared_expert_intermediate_size, or n_shared_experts × moe_intermediate_size).
   */
  sharedExpertFfnHidden: number;
  /** The first layers that keep a dense MLP of `ffnHidden` (HF first_k_dense_replace; DeepSeek-V3: 3); 0: none. */
  denseLayers: number;
  /** Equal groups of experts for group-limited routing (HF n_group, --moe-router-num-groups); absent: one. */
  routingGroups?: number;
  /** Groups each token's experts are chosen from (HF topk_group, --moe-router-group-topk); absent: all. */
  groupsPerToken?: number;
}

/** The routing a dispatch's traffic follows (routeSpread.ts): the model's groups, or one group. */
export function expertRoutingOf(moe: MoeSpec): ExpertRouting {
  const groups = moe.routingGroups ?? 1;
  return { experts: moe.experts, topK: moe.topK, groups, groupsPerToken: moe.groupsPerToken ?? groups };
}

/** Just what a model needs to know whether and where it has experts. */
interface WithMoe {
  moe?: MoeSpec;
  layers: number;
  mtpLayers?: number;
}

/**
 * Whether transformer layer `layer` has a mixture-of-experts MLP: every layer after the dense ones, and the layer of
 * each multi-token-prediction module (mtp.ts; DeepSeek-V3's has experts).
 */
export function isMoeLayer(model: WithMoe, layer: number): boolean {
  if (model.moe === undefined) return false;
  return (layer >= model.moe.denseLayers && layer < model.layers) || mtpDepthOf(model, layer) !== undefined;
}

/** Expert parallelism's share of an expert tensor: each of ep ranks holds E/ep experts whole. */
export function expertsPerRank(moe: MoeSpec, ep: number): number {
  return moe.experts / ep;
}

/**
 * Token–expert pairs one expert-parallel rank computes per micro-batch when routing is balanced: each of the ep ranks
 * of a group sends its tokens' k choices spread evenly over all E experts, so a rank receives k·T of them in all.
 */
export function balancedRoutedTokens(tokensPerRank: number, moe: MoeSpec): number {
  return tokensPerRank * moe.topK;
}

/** The collective settings a step needs for DeepEP's dispatch: the routing its traffic follows; none otherwise. */
export function expertRoutingConfig(setup: { model: { moe?: MoeSpec }; parallel: { dispatcher?: string } }): {
  expertRouting?: ExpertRouting;
} {
  const moe = setup.model.moe;
  return moe && setup.parallel.dispatcher === 'deepep' ? { expertRouting: expertRoutingOf(moe) } : {};
}
