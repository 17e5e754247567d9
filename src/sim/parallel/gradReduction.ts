import { addParamGathers } from './paramGather.js';
import { MiB } from '../engine/units.js';
import { elementsPerModelRank } from '../workload/model.js';
import { assignReductionBuckets, reductionOverlaps, type GradBucket } from './buckets.js';
import { addBucketReduction } from './bucketReduction.js';
import { addOptimizerSteps } from './optimizerStep.js';
import type { ReductionGroup } from './reductionGroup.js';
import { stageParameters } from './stageParameters.js';
import type { CompileScope, StageGradients, StagePlan } from './stepTypes.js';
import { addTiedEmbeddingSync, recordTiedEnds } from './tiedEmbeddingSync.js';
import { addZero3 } from './zero3Reduction.js';
import { addFp8WeightCasts, weightGatherBytes } from './fp8WeightCasts.js';

/**
 * Adds, for one pipeline stage, the data-parallel gradient reduction and the optimizer step, on each simulated TP
 * rank's data-parallel group: the reduction of its kind (ZeRO 0–2 buckets, bucketReduction.ts; ZeRO-3 gathers and
 * reductions, zero3Reduction.ts), the tied-embedding sync between the pipeline's ends (tiedEmbeddingSync.ts), the
 * optimizer on the GPU or the host (optimizerStep.ts), and at ZeRO 1 and 2 the all-gather of the updated weights:
 * at the end of the step, or with Megatron's --overlap-param-gather at the start (paramGather.ts). `first` is the
 * first stage's gradients, which the last stage's tied-embedding sync joins.
 */
export function addGradientReduction(scope: CompileScope, st: StagePlan, first?: StageGradients): void {
  const { ctx, layout } = scope;
  const par = ctx.setup.parallel;
  const params = stageParameters(ctx, st.stage);
  const sharded = params.tensors.map((t) => ({ ...t, elements: elementsPerModelRank(t, ctx.tp, ctx.ep, ctx.etp) }));
  // DDP's buckets without ZeRO and for Megatron's distributed optimizer, DeepSpeed's reduce_bucket_size otherwise.
  // The experts' gradients go in buckets of their own (Megatron's DDP keeps expert-parallel parameters in separate
  // buffers, distributed_data_parallel.py), reduced over their own ranks.
  const buckets = assignReductionBuckets(
    sharded.filter((t) => !t.expert),
    ctx.precision.gradientBytes,
    par,
  );
  const expertBuckets = assignReductionBuckets(
    sharded.filter((t) => t.expert),
    ctx.precision.gradientBytes,
    par,
  ).map((b) => ({ ...b, index: buckets.length + b.index }));
  st.gradients.buckets = [...buckets, ...expertBuckets];
  st.gradients.paramsPerRank = params.elementsPerRank;
  for (let t = 0; t < scope.simulatedTp; t++) {
    const group = layout.dpGroup(t, st.stage);
    const shadows =
      t === 0
        ? Array.from({ length: ctx.tp - scope.simulatedTp }, (_, i) =>
            layout.dpGroup(scope.simulatedTp + i, st.stage),
          ).filter(scope.needsShadow)
        : [];
    const g: ReductionGroup = {
      scope,
      stage: st,
      params,
      t,
      group,
      replicas: [...Array(scope.simulatedReplicas).keys()],
      members: group.slice(0, scope.simulatedReplicas),
      shadowGroups: shadows.length > 0 ? shadows : undefined,
    };
    reduceAndStep(g, buckets, first, expertBuckets.length > 0 ? expertReduction(g, expertBuckets) : undefined);
  }
}

/** The experts' share of a TP rank's reduction: their own buckets over the expert-data-parallel group. */
interface ExpertReduction {
  g: ReductionGroup;
  buckets: GradBucket[];
}

/**
 * TP rank g.t's expert-data-parallel group (layout.ts `edpGroup`: its place on the stage's expert grid, local t + tp·d
 * for replica 0, modulo etp × ep), with the stage's groups that no simulated TP rank owns as shadows (given once, with
 * TP rank 0's).
 */
function expertReduction(g: ReductionGroup, buckets: GradBucket[]): ExpertReduction {
  const { ctx, layout, simulatedTp } = g.scope;
  const stage = g.stage.stage;
  const block = ctx.etp * ctx.ep;
  const offset = g.t % block;
  const group = layout.edpGroup(offset, stage, ctx.etp, ctx.ep);
  const owned = new Set(Array.from({ length: simulatedTp }, (_, t) => t % block));
  const shadows =
    g.t === 0
      ? Array.from({ length: block }, (_, o) => o)
          .filter((o) => !owned.has(o))
          .map((o) => layout.edpGroup(o, stage, ctx.etp, ctx.ep))
      : [];
  const needed = shadows.filter(g.scope.needsShadow);
  // The simulated replicas whose rank of TP rank g.t is in the group (all in full fidelity with ep 1 and etp = tp;
  // symmetric mode simulates replica 0).
  const replicas = g.replicas.filter((d) => (g.t + ctx.tp * d) % block === offset);
  return {
    g: {
      ...g,
      group,
      replicas,
      members: replicas.map((d) => layout.rank(g.t, d, stage)),
      shadowGroups: needed.length > 0 ? needed : undefined,
      expert: true,
    },
    buckets,
  };
}

/** One TP rank's reduction, tied-embedding sync, optimizer steps and weight all-gather. */
function reduceAndStep(
  g: ReductionGroup,
  buckets: GradBucket[],
  first: StageGradients | undefined,
  experts?: ExpertReduction,
): void {
  const { ctx, layout } = g.scope;
  const par = ctx.setup.parallel;
  const dp = layout.dp;
  const { zero } = par;
  // Megatron's --overlap-param-gather: the weight all-gather opens the step (ahead of the reductions on the comm
  // stream).
  const gatherAhead = dp > 1 && zero === 1 && par.overlapParamGather === true;
  const expertGroup = experts && experts.g.group.length > 1 ? experts : undefined;
  if (gatherAhead) {
    addGathersAhead(g, buckets);
    // Megatron's distributed optimizer overlaps the expert buffers' gathers too, over their own ranks.
    if (expertGroup) addGathersAhead(expertGroup.g, expertGroup.buckets);
  }
  const lastComm =
    dp <= 1
      ? -1
      : zero === 3
        ? addZero3(g, reductionOverlaps(par), deepspeedSizes(g))
        : addBucketReduction(g, buckets, reductionOverlaps(par));
  const expertComm =
    experts && experts.g.group.length > 1 ? addBucketReduction(experts.g, experts.buckets, reductionOverlaps(par)) : -1;
  const embeddingSyncs = addTiedEmbeddingSync(g, lastComm, first);
  const pendingTp = g.stage.gradients.pendingTp ?? [];
  const optimizerIds = addOptimizerSteps(g, lastComm, (i) => [
    ...(lastComm >= 0 ? [lastComm] : []),
    ...(expertComm >= 0 ? [expertComm] : []),
    ...(embeddingSyncs.length > 0 ? [embeddingSyncs[i]] : []),
    ...pendingTp,
  ]);
  recordTiedEnds(g, lastComm, optimizerIds);
  const atEnd = (zero === 1 || zero === 2) && !gatherAhead;
  const gather = dp > 1 && atEnd ? addWeightGather(g, 'all-gather updated weights', optimizerIds) : undefined;
  if (expertGroup && atEnd) addWeightGather(expertGroup.g, 'all-gather updated expert weights', optimizerIds);
  addFp8WeightCasts(g, optimizerIds, gather);
}

/** ZeRO 1-2's all-gather of a group's updated weights after its optimizer steps; returns the task. */
function addWeightGather(g: ReductionGroup, label: string, optimizerIds: number[]): number {
  return g.scope.program.collective(
    'dp-allgather',
    label,
    { op: 'all_gather', group: g.group, bytes: weightGatherBytes(g), shadowGroups: g.shadowGroups },
    optimizerIds,
    -1,
    'comm',
    g.members,
  );
}

/** Megatron's --overlap-param-gather: the distributed optimizer's weight all-gathers at the start of the step. */
function addGathersAhead(g: ReductionGroup, buckets: GradBucket[]): void {
  const { ctx, program, passes, key } = g.scope;
  const par = ctx.setup.parallel;
  const layerOf = new Map(g.params.tensors.map((x) => [x.name, x.layer]));
  const { gradientBytes } = ctx.precision;
  // With the FP8 parameter gather the FP8 weights go as one byte each: the buckets' mean bytes per weight.
  const weightBytes = ctx.setup.training.fp8?.paramGather
    ? weightGatherBytes(g) / g.params.elementsPerRank
    : ctx.precision.elementBytes;
  addParamGathers({
    program,
    stage: g.stage,
    passes,
    key,
    pp: ctx.pp,
    t: g.t,
    replicas: g.replicas,
    buckets,
    layerOf,
    weightBytes,
    gradientBytes,
    group: g.group,
    members: g.members,
    shadowGroups: g.shadowGroups,
    aligned: ctx.pp > 1 && par.schedule === 'interleaved',
  });
}

/** DeepSpeed ZeRO-3's collective sizes in elements, or undefined for FSDP's one collective a block. */
function deepspeedSizes(g: ReductionGroup) {
  const zc = g.scope.ctx.setup.parallel.zeroConfig;
  if (zc.stage3 !== 'deepspeed') return undefined;
  return {
    reduceBucketElements: (zc.reduceBucketMB * MiB) / g.scope.ctx.precision.gradientBytes,
    prefetchBucketElements: zc.prefetchBucketElements,
    persistenceThresholdElements: zc.persistenceThresholdElements,
  };
}
