import { mtpDepths, mtpLayerIndex } from './mtp.js';
import { randomStream, standardNormalUnclamped } from '../engine/random.js';
import { isMoeLayer, type MoeSpec } from './moe.js';

/**
 * How a router spreads tokens over the experts. By default evenly. `skew` σ draws each layer's expert popularity as
 * log-normal weights exp(σ·z), z standard normal, from the scenario's seed (σ = 0: balanced); `tokensPerExpert` gives
 * a measured histogram instead (one count per expert, used for every layer). `capacityFactor` caps each expert at that
 * multiple of the balanced share and drops the rest (GShard's and Megatron's --moe-expert-capacity-factor); absent:
 * dropless.
 */
export interface RoutingSetup {
  skew: number;
  tokensPerExpert?: readonly number[];
  capacityFactor?: number;
  /** Every expert computes its full capacity, padded where fewer tokens came (needs `capacityFactor`). */
  padToCapacity?: boolean;
}

/**
 * What routing does to one layer: the busiest expert-parallel rank's work against the balanced share, and the drops.
 */
export interface ExpertLoad {
  /**
   * Token–expert pairs the busiest expert-parallel rank computes, as a multiple of the balanced share (1 when balanced;
   * E/ep experts a rank). The all-to-alls and the experts' GEMMs wait for that rank, so it bounds the layer.
   */
  busiestFactor: number;
  /** Share of the routed token–expert pairs dropped by the capacity (0 dropless). */
  droppedShare: number;
}

/** The share of the routed tokens each expert of layer `layer` receives (sums to 1). */
export function expertShares(moe: MoeSpec, routing: RoutingSetup, seed: number, layer: number): number[] {
  const E = moe.experts;
  let weights: number[];
  if (routing.tokensPerExpert) weights = [...routing.tokensPerExpert];
  else if (routing.skew > 0) {
    const rng = randomStream(seed, `routing/layer-${layer}`);
    weights = Array.from({ length: E }, () => Math.exp(routing.skew * standardNormalUnclamped(rng)));
  } else return new Array<number>(E).fill(1 / E);
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / total);
}

/**
 * Layer `layer`'s load: each expert keeps at most capacityFactor / E of the pairs; expert-parallel rank r holds experts
 * r·E/ep … (r+1)·E/ep − 1 (Megatron-Core's local expert indices), and the busiest rank sets the factor.
 */

export function expertLoad(moe: MoeSpec, ep: number, routing: RoutingSetup, seed: number, layer: number): ExpertLoad {
  const shares = expertShares(moe, routing, seed, layer);
  const cap = routing.capacityFactor !== undefined ? routing.capacityFactor / moe.experts : Infinity;
  const kept = shares.map((s) => Math.min(s, cap));
  const computed = routing.padToCapacity && cap !== Infinity ? shares.map(() => cap) : kept;
  const perRank = moe.experts / ep;
  let busiest = 0;
  for (let r = 0; r < ep; r++) {
    let load = 0;
    for (let e = r * perRank; e < (r + 1) * perRank; e++) load += computed[e];
    busiest = Math.max(busiest, load);
  }
  const dropped = cap === Infinity ? 0 : Math.max(0, 1 - kept.reduce((a, b) => a + b, 0));
  return { busiestFactor: busiest * ep, droppedShare: dropped };
}

/** Whether routing is the balanced, dropless default (no draw needed). */
export function isBalancedRouting(routing: RoutingSetup | undefined): boolean {
  return !routing || (routing.skew === 0 && !routing.tokensPerExpert && routing.capacityFactor === undefined);
}

/**
 * Each layer's load by layer index (undefined for a dense layer and the head's index), multi-token-prediction layers
 * (mtp.ts) included, or undefined when routing is balanced or the model dense.
 */
export function layerLoads(
  model: { moe?: MoeSpec; layers: number; mtpLayers?: number },
  ep: number,
  routing: RoutingSetup | undefined,
  seed: number,
): (ExpertLoad | undefined)[] | undefined {
  const moe = model.moe;
  if (!moe || !routing || isBalancedRouting(routing)) return undefined;
  const depths = mtpDepths(model);
  return Array.from({ length: depths > 0 ? mtpLayerIndex(model, depths) : model.layers }, (_, l) =>
    isMoeLayer(model, l) ? expertLoad(moe, ep, routing, seed, l) : undefined,
  );
}
