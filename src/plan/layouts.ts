import type { Scenario } from '../scenario/resolve.js';
import { defaultVirtualStages, type Dispatcher, type PipelineSchedule, type PlanSpace } from './space.js';
import { deepEpRuns } from '../scenario/dispatcherChecks.js';
import { expertPlacementFits } from '../scenario/moeChecks.js';

/** How a plan splits the GPUs and the batch: the settings that decide the work per GPU and what it waits for. */
export interface PlanLayout {
  tp: number;
  cp: number;
  pp: number;
  dp: number;
  microBatch: number;
  /** Micro-batches per step: global batch / (micro-batch × dp). */
  microBatches: number;
  schedule: PipelineSchedule;
  /** Model chunks per stage (1 unless interleaved). */
  virtualStages: number;
  /**
   * The embedding and the loss count as a layer each in the split
   * (Megatron's `--account-for-embedding-in-pipeline-split` and `--account-for-loss-in-pipeline-split`): how a model
   * whose layers do not divide over the chunks splits evenly (Llama 3 405B's 126 layers over 16 stages).
   */
  countEmbeddingAndLoss: boolean;
  /** Expert-parallel size, for a model with experts only. */
  ep?: number;
  /** DeepEP's dispatch in place of the all-to-all (ep > 1 only; absent: the all-to-all). */
  dispatcher?: 'deepep';
  /** Combined 1F1B (ep > 1 and no pipeline only; absent: off). */
  moeOverlap?: true;
}

/** Layouts left out before any memory is counted, by why. */
export type LayoutRule =
  | 'batch does not divide'
  | 'layers do not split'
  | 'interleaving needs micro-batches in whole rounds'
  | 'experts do not fold into the stage';

export interface LayoutSet {
  layouts: PlanLayout[];
  removed: Map<LayoutRule, number>;
}

/**
 * How the layers of a `pp`-stage, `v`-chunk pipeline split: evenly, or evenly once the embedding and the loss count
 * as layers; undefined when neither works (an uneven `layersPerStage` would, but the plan does not search those).
 */
function splitOf(layers: number, pp: number, v: number): { countEmbeddingAndLoss: boolean } | undefined {
  if (pp === 1) return { countEmbeddingAndLoss: false };
  if (layers % (pp * v) === 0) return { countEmbeddingAndLoss: false };
  if ((layers + 2) % (pp * v) === 0) return { countEmbeddingAndLoss: true };
  return undefined;
}

/** The schedules (and chunks per stage) a `pp`-stage pipeline with `m` micro-batches may run. */
function schedulesOf(space: PlanSpace, layers: number, pp: number): { schedule: PipelineSchedule; v: number }[] {
  if (pp === 1) return [{ schedule: '1f1b', v: 1 }];
  const out: { schedule: PipelineSchedule; v: number }[] = [];
  if (space.schedule.includes('1f1b')) out.push({ schedule: '1f1b', v: 1 });
  if (space.schedule.includes('interleaved')) {
    const perStage = Math.floor((layers + 2) / pp);
    for (const v of space.virtualStages ?? defaultVirtualStages(layers % pp === 0 ? layers / pp : perStage))
      if (v >= 2) out.push({ schedule: 'interleaved', v });
  }
  return out;
}

/**
 * The expert-parallel sizes of a layout whose stage has `stageRanks` (tp × cp × dp) ranks: each of the space's that,
 * times the experts' tp (the scenario's etp, else the layout's tp), divides them (the experts fold into the stage's
 * ranks), 0 for one that does not; [undefined] for a dense model.
 */
function expertSplits(
  s: Scenario,
  space: PlanSpace,
  at: { tp: number; cp: number; pp: number; dp: number },
): (number | undefined)[] {
  if (!space.ep) return [undefined];
  const etp = s.parallel.etp ?? at.tp;
  const stageRanks = at.tp * at.cp * at.dp;
  return space.ep.map((ep) =>
    stageRanks % (etp * ep) === 0 && expertPlacementFits(s.parallel.placement, at.pp, etp * ep, at.tp * at.cp) ? ep : 0,
  );
}

/**
 * The dispatchers a layout with `ep` may run: the space's, DeepEP only where it runs (ep > 1, whole experts a rank,
 * NVIDIA GPUs with NVLink; dispatcherChecks.ts), the all-to-all otherwise.
 */
function dispatchersOf(s: Scenario, space: PlanSpace, ep: number | undefined, tp: number): (Dispatcher | undefined)[] {
  if (ep === undefined || !space.dispatcher) return [undefined];
  const deepEp = deepEpRuns(ep, s.parallel.etp ?? tp, s.cluster.node);
  const out = space.dispatcher.filter((d) => d === 'alltoall' || deepEp);
  return out.length > 0 ? out : ['alltoall'];
}

/**
 * Combined 1F1B as the space has it, where it runs: all-to-alls to hide (ep > 1), two micro-batches or more, and over
 * a pipeline the interleaved schedule (as Megatron asks).
 */
function overlapsOf(
  space: PlanSpace,
  ep: number | undefined,
  at: { pp: number; schedule: PipelineSchedule; m: number },
) {
  const runs = ep !== undefined && ep > 1 && at.m >= 2 && (at.pp === 1 || at.schedule === 'interleaved');
  return runs && space.moeOverlap ? space.moeOverlap : [false];
}

/**
 * Every layout of the space on `gpus` GPUs: tp × cp × pp × dp = gpus, a global batch that divides into micro-batches
 * over dp, layers that split over the chunks, and for the interleaved schedule micro-batches in whole rounds of pp
 * (as Megatron-LM asked before its rounds could be cut short). In a fixed order, so that a plan is deterministic.
 */
export function planLayouts(s: Scenario, space: PlanSpace, gpus: number): LayoutSet {
  const removed = new Map<LayoutRule, number>();
  const drop = (rule: LayoutRule) => removed.set(rule, (removed.get(rule) ?? 0) + 1);
  const layouts: PlanLayout[] = [];
  const layers = s.model.layers;
  const globalBatch = s.training.globalBatch;
  for (const tp of space.tp) {
    for (const cp of space.cp) {
      for (const pp of space.pp) {
        if (gpus % (tp * cp * pp) !== 0 || pp > layers) continue;
        const dp = gpus / (tp * cp * pp);
        for (const microBatch of space.microBatch) {
          if (globalBatch % (microBatch * dp) !== 0) {
            drop('batch does not divide');
            continue;
          }
          const m = globalBatch / (microBatch * dp);
          for (const { schedule, v } of schedulesOf(space, layers, pp)) {
            const split = splitOf(layers, pp, v);
            if (!split) drop('layers do not split');
            else if (schedule === 'interleaved' && m % pp !== 0)
              drop('interleaving needs micro-batches in whole rounds');
            else
              for (const ep of expertSplits(s, space, { tp, cp, pp, dp })) {
                if (ep === 0) drop('experts do not fold into the stage');
                else
                  for (const dispatcher of dispatchersOf(s, space, ep, tp))
                    for (const overlap of overlapsOf(space, ep, { pp, schedule, m }))
                      layouts.push({
                        tp,
                        cp,
                        pp,
                        dp,
                        microBatch,
                        microBatches: m,
                        schedule,
                        virtualStages: v,
                        ...split,
                        ...(ep !== undefined ? { ep } : {}),
                        ...(dispatcher === 'deepep' ? { dispatcher } : {}),
                        ...(overlap ? { moeOverlap: true as const } : {}),
                      });
              }
          }
        }
      }
    }
  }
  return { layouts, removed };
}
