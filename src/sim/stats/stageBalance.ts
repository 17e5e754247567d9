import type { StepPlan } from '../parallel/stepTypes.js';
import type { RankBreakdown } from './breakdown.js';

/** How evenly a pipeline's stages share the compute, and a split of the layers that would even them. */
export interface StageBalance {
  /** Compute of each pipeline stage over the step (mean over its simulated ranks), s. */
  computeS: number[];
  /** Transformer layers each stage holds. */
  layers: number[];
  /**
   * The idle that unequal stages force, as a share of the step: the slowest stage's compute minus the mean. Every
   * stage waits at least that long, since no step is shorter than its slowest stage's compute.
   */
  imbalanceShare: number;
  /** One layer's compute over the step, s (the median per layer of the stages before the last); absent if unknown. */
  layerS?: number;
  /** A per-stage layer count that brings the slowest stage down by at least `SUGGEST_GAIN`, when there is one. */
  suggestedLayersPerStage?: number[];
}

/** The least drop of the slowest stage's compute worth suggesting a new split for. */
export const SUGGEST_GAIN = 0.02;

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * Deals `totalLayers` over stages whose fixed work is `fixedS` (the embedding, the output layer and loss) and whose
 * layers take `layerS` each, at least `minLayers` per stage, so that the slowest stage is as fast as it can be: each
 * layer goes to the stage that would finish earliest with it (optimal for items of one size).
 */
export function balancedLayers(
  fixedS: readonly number[],
  layerS: number,
  totalLayers: number,
  minLayers: number,
): number[] {
  const counts = fixedS.map(() => minLayers);
  for (let left = totalLayers - minLayers * fixedS.length; left > 0; left--) {
    let best = 0;
    for (let s = 1; s < counts.length; s++)
      if (fixedS[s] + (counts[s] + 1) * layerS < fixedS[best] + (counts[best] + 1) * layerS) best = s;
    counts[best]++;
  }
  return counts;
}

/**
 * The balance of a pipeline's stages (undefined without one). A layer's time is the median, over the stages before
 * the last, of compute per layer (the first stage's embedding is a lookup; the last stage's output layer and loss are
 * the work that unbalances most pipelines); what a stage computes beyond its layers at that rate is its fixed work.
 */
export function stageBalance(
  plan: StepPlan,
  breakdowns: readonly RankBreakdown[],
  stepTimeS: number,
  totalLayers: number,
): StageBalance | undefined {
  const pp = plan.layout.pp;
  if (pp < 2) return undefined;
  const sums = new Array<number>(pp).fill(0);
  const ranks = new Array<number>(pp).fill(0);
  for (const b of breakdowns) {
    const stage = plan.layout.coords(b.rank).p;
    sums[stage] += b.computeNs / 1e9;
    ranks[stage]++;
  }
  if (ranks.some((n) => n === 0)) return undefined;
  const computeS = sums.map((s, i) => s / ranks[i]);
  const layers = plan.stages.map((st) => st.chunks.flat().filter((b) => b.layer >= 0 && b.layer < totalLayers).length);
  const slowest = Math.max(...computeS);
  const mean = computeS.reduce((a, b) => a + b, 0) / pp;
  const balance: StageBalance = { computeS, layers, imbalanceShare: (slowest - mean) / stepTimeS };
  const perLayer = computeS
    .slice(0, -1)
    .map((c, s) => (layers[s] > 0 ? c / layers[s] : NaN))
    .filter((x) => Number.isFinite(x));
  if (perLayer.length === 0) return balance;
  const layerS = median(perLayer);
  balance.layerS = layerS;
  const fixedS = computeS.map((c, s) => Math.max(0, c - layers[s] * layerS));
  const chunks = plan.stages[0].chunks.length;
  const suggested = balancedLayers(fixedS, layerS, totalLayers, chunks);
  const predicted = Math.max(...suggested.map((n, s) => fixedS[s] + n * layerS));
  if (predicted < slowest * (1 - SUGGEST_GAIN) && suggested.some((n, s) => n !== layers[s]))
    balance.suggestedLayersPerStage = suggested;
  return balance;
}
