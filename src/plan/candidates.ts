import type { Scenario } from '../scenario/resolve.js';
import type { PlanLayout } from './layouts.js';
import type { Offload, PlanSpace, Recompute, ZeroStage } from './space.js';
import { traitsOf } from '../sim/hardware/architectures.js';

/** The settings a plan chooses per layout: what trades memory for time, and how tensor parallelism runs. */
export interface PlanKnobs {
  zero: ZeroStage;
  offload: Offload;
  recompute: Recompute;
  sequenceParallel: boolean;
  tpCommOverlap: boolean;
}

/** One way to run the job: a layout and its knobs. */
export interface PlanCandidate {
  layout: PlanLayout;
  knobs: PlanKnobs;
}

/** What the base scenario needs to say for the knobs to apply: its tp style, framework and node size. */
export interface KnobContext {
  tpStyle: 'megatron' | 'allgather';
  framework: string;
  gpusPerNode: number;
  /** Transformer Engine's userbuffers TP overlap runs on the GPU's architecture (architectures.ts). */
  tpCommOverlapRuns: boolean;
  /** The optimizer state is not all fp32 (the host Adam of offload keeps fp32; resolve refuses the pair). */
  reducedOptimizerState: boolean;
  /** The scenario overlaps Megatron's distributed optimizer's weight gather (which needs ZeRO-1). */
  overlapParamGather: boolean;
  /** The framework's interleaved schedule runs every forward first when m = pp (FrameworkSpec). */
  interleavedAllWarmupAtOneRound: boolean;
}

export function knobContext(s: Scenario): KnobContext {
  return {
    tpStyle: s.parallel.tpStyle,
    framework: s.training.framework,
    gpusPerNode: s.cluster.node.gpusPerNode,
    tpCommOverlapRuns: traitsOf(s.cluster.node.gpu).tpCommOverlap,
    reducedOptimizerState: s.training.optimizerState !== undefined,
    overlapParamGather: s.parallel.overlapParamGather === true,
    interleavedAllWarmupAtOneRound: s.framework?.interleavedAllWarmupWhenOneGroup === true,
  };
}

/**
 * The ZeRO stages a layout can take: DeepSpeed pipelines take ZeRO-1 at most, ZeRO-3 no context parallelism, and with
 * one rank per weight (dp × cp = 1) ZeRO has nothing to shard over, so only stage 0 (if searched) is kept.
 */
export function zeroStagesOf(space: PlanSpace, layout: PlanLayout): ZeroStage[] {
  // In increasing order, whatever --space gave: ZeRO-3 is compared with the ZeRO-2 before it.
  const allowed = [...space.zero]
    .sort((a, b) => a - b)
    .filter((z) => (layout.pp === 1 || z <= 1) && (layout.cp === 1 || z !== 3));
  if (layout.dp * layout.cp === 1 && allowed.includes(0)) return [0];
  return allowed;
}

/** Sequence parallelism where tensor parallelism has it (Megatron's style, tp > 1); off otherwise. */
export function sequenceParallelOf(space: PlanSpace, layout: PlanLayout, ctx: KnobContext): boolean[] {
  if (layout.tp === 1 || ctx.tpStyle !== 'megatron') return [false];
  return space.sequenceParallel ?? [true];
}

/**
 * TP communication overlap where Transformer Engine has it: sequence parallel, inside a node, no framework model, a GPU
 * its userbuffers run on.
 */
export function tpCommOverlapOf(
  space: PlanSpace,
  layout: PlanLayout,
  sequenceParallel: boolean,
  ctx: KnobContext,
): boolean[] {
  const possible =
    sequenceParallel &&
    ctx.framework === 'none' &&
    ctx.tpCommOverlapRuns &&
    layout.tp <= ctx.gpusPerNode &&
    ctx.gpusPerNode % layout.tp === 0;
  return possible ? space.tpCommOverlap : [false];
}

/** Offload where it can run: with ZeRO, and an fp32 optimizer state. */
export function offloadsOf(space: PlanSpace, zero: ZeroStage, ctx: KnobContext): Offload[] {
  // Always no offload first, whatever order --space gave: the rules below compare with it.
  return (['none', 'cpu'] as const).filter(
    (o) => space.offload.includes(o) && (o === 'none' || (zero >= 1 && !ctx.reducedOptimizerState)),
  );
}

/**
 * The `--set` overrides that turn the scenario into this candidate (every searched field, so that none is inherited).
 */
export function candidateSets(c: PlanCandidate, ctx: KnobContext): string[] {
  const { layout: l, knobs: k } = c;
  const sets = [
    `parallel.tp=${l.tp}`,
    `parallel.cp=${l.cp}`,
    `parallel.pp=${l.pp}`,
    `parallel.dp=${l.dp}`,
    `training.microBatch=${l.microBatch}`,
    `parallel.schedule=${l.schedule}`,
    `parallel.virtualStages=${l.virtualStages}`,
    'parallel.layersPerStage=null',
    `parallel.accountForEmbeddingInSplit=${l.countEmbeddingAndLoss}`,
    `parallel.accountForLossInSplit=${l.countEmbeddingAndLoss}`,
    `parallel.recompute=${k.recompute}`,
    `parallel.sequenceParallel=${k.sequenceParallel}`,
    `parallel.tpCommOverlap=${k.tpCommOverlap}`,
    `parallel.zero=${k.zero}`,
    `parallel.offload=${k.offload}`,
    ...(l.ep !== undefined
      ? [
          `parallel.ep=${l.ep}`,
          `parallel.dispatcher=${l.dispatcher ?? 'alltoall'}`,
          `parallel.moeOverlap=${l.moeOverlap === true}`,
        ]
      : []),
  ];
  // Megatron's overlapped weight gather belongs to its distributed optimizer (ZeRO-1).
  if (ctx.overlapParamGather && k.zero !== 1) sets.push('parallel.overlapParamGather=false');
  return sets;
}

/** The candidate the scenario itself is, as far as the plan's settings describe it. */
export function scenarioCandidate(s: Scenario): PlanCandidate {
  const p = s.parallel;
  const microBatches = s.training.globalBatch / (s.training.microBatch * p.dp);
  return {
    layout: {
      tp: p.tp,
      cp: p.cp ?? 1,
      pp: p.pp,
      dp: p.dp,
      microBatch: s.training.microBatch,
      microBatches,
      schedule: p.schedule === 'interleaved' ? 'interleaved' : '1f1b',
      virtualStages: p.virtualStages,
      countEmbeddingAndLoss: p.accountForEmbeddingInSplit === true && p.accountForLossInSplit === true,
      ...(s.model.moe ? { ep: p.ep ?? 1 } : {}),
      ...(s.model.moe && p.dispatcher === 'deepep' ? { dispatcher: 'deepep' as const } : {}),
      ...(s.model.moe && p.moeOverlap ? { moeOverlap: true as const } : {}),
    },
    knobs: {
      zero: p.zero,
      offload: p.offload,
      recompute: p.recompute,
      sequenceParallel: p.sequenceParallel,
      tpCommOverlap: p.tpCommOverlap !== undefined,
    },
  };
}

/** The overrides of `sets` whose values differ from the scenario's own (`ownSets`, the same fields): what to type. */
export function changedSets(sets: readonly string[], ownSets: readonly string[]): string[] {
  const own = new Set(ownSets);
  return sets.filter((s) => !own.has(s));
}

/** A short name of a candidate's split, for tables: `tp 8 × pp 4 × dp 2, mb 1, interleaved ×5`. */
export function layoutText(l: PlanLayout): string {
  const sizes = [`tp ${l.tp}`, ...(l.cp > 1 ? [`cp ${l.cp}`] : []), `pp ${l.pp}`, `dp ${l.dp}`].join(' × ');
  const experts =
    l.ep !== undefined
      ? `, ep ${l.ep}${l.dispatcher === 'deepep' ? ' DeepEP' : ''}${l.moeOverlap ? ', combined 1F1B' : ''}`
      : '';
  const schedule = l.pp === 1 ? '' : l.schedule === 'interleaved' ? `, interleaved ×${l.virtualStages}` : ', 1F1B';
  return `${sizes}${experts}, mb ${l.microBatch}${schedule}`;
}

/** The knobs in a few words: `ZeRO-1, selective recompute, SP`. */
export function knobsText(k: PlanKnobs): string {
  const parts = [`ZeRO-${k.zero}`];
  if (k.offload === 'cpu') parts.push('offload');
  if (k.recompute !== 'none') parts.push(`${k.recompute} recompute`);
  if (k.sequenceParallel) parts.push('SP');
  if (k.tpCommOverlap) parts.push('TP overlap');
  return parts.join(', ');
}
