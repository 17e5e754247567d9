import { Program } from '../program/types.js';
import type { StepSetup } from '../setup.js';
import type { Block, Op } from '../workload/ops.js';
import { buildBlocks } from '../workload/transformerOps.js';
import { resolveAttentionKernel } from '../workload/attentionKernels.js';
import { passStartHostNs } from '../workload/passStartWait.js';
import { fp8AmaxReductionBytes } from '../workload/fp8.js';
import { jitterer } from '../engine/random.js';
import { gpuSpeedFactors } from './gpuSpeed.js';
import { ParallelLayout } from './layout.js';
import { peakInFlight, type PipeOp, type ScheduleUnit } from './schedules.js';
import { stageOps, stageUnits, unitOrder } from './combinedSchedule.js';
import { addCombinedPasses } from './combinedPass.js';
import { tpSyncPoints } from './tpSync.js';
import { moeSyncPoints } from './moeSync.js';
import { cpSyncPoints } from './contextParallel.js';
import { cpRing, RingWaits } from './cpRing.js';
import { overlapTpSyncs, withOverlapSmMargin } from './tpCommOverlap.js';
import { passTemplate } from './blockTemplate.js';
import { addGradientReduction } from './gradReduction.js';
import { addPipelineTransfers } from './pipelineTransfers.js';
import { PassBuilder, type PassRanks } from './passBuilder.js';
import { stepContext, type StepContext } from './stepContext.js';
import type { CompileScope, PassRecord, PassTemplates, StagePlan, StepPlan } from './stepTypes.js';

const names = (ops: readonly Op[]) => ops.map((o) => o.name);

/** The blocks of each virtual stage: the embedding opens the first, the final norm, head and loss close the last. */
function virtualStageBlocks(ctx: StepContext, blocks: readonly Block[]): Block[][] {
  const layers = ctx.setup.model.layers;
  const layerBlocks = blocks.filter((b) => b.layer >= 0 && b.layer < layers);
  const last = ctx.virtualStageLayers.length - 1;
  return ctx.virtualStageLayers.map((stageLayers, vs) => {
    const list = stageLayers.map((l) => layerBlocks[l]);
    if (vs === 0) list.unshift(...blocks.filter((b) => b.layer < 0));
    if (vs === last) list.push(...blocks.filter((b) => b.layer >= layers));
    return list;
  });
}

/** The model's blocks, as this step's shapes, precision, parallelism and kernels make them. */
function stepBlocks(ctx: StepContext): Block[] {
  const { model, training, parallel: par, cluster, framework } = ctx.setup;
  const attentionKernel = resolveAttentionKernel(training.attentionKernel, cluster.node.gpu);
  return buildBlocks(model, {
    microBatch: training.microBatch,
    seqLen: training.seqLen,
    cp: ctx.cp,
    cpCommType: par.cpCommType,
    dtype: ctx.precision.dtype,
    tp: ctx.tp,
    ...(ctx.ep > 1 ? { ep: ctx.ep } : {}),
    ...(ctx.etp !== ctx.tp ? { etp: ctx.etp } : {}),
    ...(ctx.expertLoads ? { expertLoadFactors: ctx.expertLoads.map((l) => l?.busiestFactor) } : {}),
    ...(par.dispatcher === 'deepep' ? { dispatcher: par.dispatcher } : {}),
    sequenceParallel: par.sequenceParallel,
    flashAttention: training.flashAttention,
    recompute: par.recompute,
    framework,
    kernels: training.kernels,
    attentionKernel,
    ...(training.precision === 'fp8' && training.fp8 ? { fp8: training.fp8 } : {}),
  });
}

/**
 * The pass templates of every block: its ops (with TP communication overlap, some GEMMs leave SMs to the
 * communication kernels beside them) and the TP and context-parallel syncs between them.
 */
function passTemplates(ctx: StepContext, blocks: readonly Block[]): PassTemplates {
  const { model, parallel: par, cluster, framework } = ctx.setup;
  const { tp, cp, tokensPerRank: tokens } = ctx;
  const { elementBytes, dtype } = ctx.precision;
  const tpCtx = {
    model,
    tp,
    sequenceParallel: par.sequenceParallel,
    style: par.tpStyle,
    tokens,
    elementBytes,
    asyncGradReduce: framework?.asyncTpGradReduce ?? true,
    ...(ctx.precision.gemmDtype === 'fp8' ? { fp8Gathers: true } : {}),
  };
  const cpCtx = { model, cp, tp, tokens, elementBytes, commType: par.cpCommType };
  const routedTokens = par.sequenceParallel ? tokens / tp : tokens;
  const moeCtx = {
    model,
    tp,
    ep: ctx.ep,
    etp: ctx.etp,
    tokens,
    routedTokens,
    elementBytes,
    dispatcher: par.dispatcher,
  };
  const overlap = par.tpCommOverlap;
  const syncPoints = (names: readonly string[], layer: number) => {
    const tpSyncs = tpSyncPoints(names, tpCtx);
    const loadFactor = ctx.expertLoads?.[layer]?.busiestFactor ?? 1;
    return [
      ...(overlap ? overlapTpSyncs(names, tpSyncs) : tpSyncs),
      ...cpSyncPoints(names, cpCtx),
      ...moeSyncPoints(names, { ...moeCtx, loadFactor }),
    ].sort((a, b) => a.afterOp - b.afterOp);
  };
  const opsOf = (ops: readonly Op[]) => (overlap ? ops.map((o) => withOverlapSmMargin(o, overlap)) : ops);
  const gpu = cluster.node.gpu;
  const collHostNs = framework?.hostOpNs ?? 0;
  const templates: PassTemplates = new Map();
  for (const b of blocks) {
    templates.set(b, {
      F: passTemplate(opsOf(b.forward), syncPoints(names(b.forward), b.layer), 'forward', gpu, dtype, collHostNs),
      B: passTemplate(opsOf(b.backward), syncPoints(names(b.backward), b.layer), 'backward', gpu, dtype, collHostNs),
    });
  }
  return templates;
}

/**
 * The scope of a new program: symmetric mode simulates one data-parallel replica and, in it, one rank per TP group:
 * the ranks of a TP group run the same kernels and meet at every TP collective, so they move in lockstep. The
 * others' traffic (pipeline sends, gradient reduction) still runs, as shadow flows. (Jittered kernels would break the
 * lockstep; scenarios then run in full fidelity anyway.)
 */
function compileScope(ctx: StepContext): CompileScope {
  const { setup } = ctx;
  const layout = new ParallelLayout(ctx.tp, ctx.replicas, ctx.pp, setup.parallel.placement, ctx.cp);
  const simulatedReplicas = setup.fidelity === 'full' ? layout.dp : 1;
  const simulatedTp = setup.fidelity === 'full' || setup.noise.computeJitter > 0 ? ctx.tp : 1;
  const simulated: number[] = [];
  for (let r = 0; r < layout.world; r++) {
    const c = layout.coords(r);
    if (c.d < simulatedReplicas && c.t < simulatedTp) simulated.push(r);
  }
  const key = (d: number, vs: number, mb: number, kind: 'F' | 'B') => `${d}/${vs}/${mb}/${kind}`;
  const needsShadow = shadowNeed(simulated, setup.cluster.node.gpusPerNode);
  const speedOf = gpuSpeedFactors(setup, layout.world, (r) => layout.coords(r).p);
  return {
    ctx,
    program: new Program(layout.world, simulated),
    layout,
    passes: new Map(),
    key,
    simulatedReplicas,
    simulatedTp,
    simulatedSet: new Set(simulated),
    needsShadow,
    speedOf,
  };
}

/**
 * Compiles one training step for any tp × pp × dp split into per-rank task graphs: each pipeline
 * stage runs its schedule of forward/backward passes over its model chunks; inside a pass, TP
 * collectives sit between compute segments (blocking on the compute stream, or overlapping the next
 * GEMM on the TP stream); activations and their gradients move between stages by point-to-point
 * transfers; gradients are reduced over the DP group (DDP buckets or ZeRO), then the optimizer runs.
 */
export function compileStep(setup: StepSetup): StepPlan {
  const ctx = stepContext(setup);
  const blocks = stepBlocks(ctx);
  const chunkBlocks = virtualStageBlocks(ctx, blocks);
  const templates = passTemplates(ctx, blocks);
  const scope = compileScope(ctx);
  const { program, layout } = scope;
  // Only when every rank of a ring is simulated (full fidelity) is there a predecessor's send to wait for.
  const ringWaits = scope.simulatedReplicas === layout.dp ? new RingWaits(ctx.cp) : undefined;
  const units = stageUnits(ctx);
  const stages = Array.from({ length: ctx.pp }, (_, s) =>
    compileStage(scope, { stage: s, chunkBlocks, templates, ringWaits, units: units[s] }),
  );
  ringWaits?.link(program);
  addPipelineTransfers(
    scope,
    (ctx.tokensPerRank * setup.model.hidden * ctx.precision.elementBytes) / (ctx.tp > 1 ? ctx.tp : 1),
  );
  for (const st of stages) addGradientReduction(scope, st, stages[0].gradients);
  return { program, layout, microBatchesPerStep: ctx.microBatches, stages };
}

/** What compiling one stage's passes needs besides the scope. */
interface StageInput {
  stage: number;
  chunkBlocks: Block[][];
  templates: PassTemplates;
  ringWaits?: RingWaits;
  /** The stage's steps: one pass each, or combined (combinedSchedule.ts). */
  units: ScheduleUnit[];
}

/** Runs stage `stage`'s schedule on each simulated replica: every pass, block by block. */
function compileStage(scope: CompileScope, input: StageInput): StagePlan {
  const { ctx, layout, passes, key } = scope;
  const { stage: s, chunkBlocks, units } = input;
  const schedule = stageOps(ctx, s);
  const combined = ctx.setup.parallel.moeOverlap === true;
  const chunks = Array.from({ length: ctx.chunksPerStage }, (_, c) => chunkBlocks[c * ctx.pp + s]);
  const plan: StagePlan = {
    stage: s,
    chunks,
    schedule,
    peakInFlight: peakInFlight(unitOrder(units)),
    gradients: { buckets: [], paramsPerRank: 0 },
  };
  const tpShadows = Array.from({ length: layout.dp - scope.simulatedReplicas }, (_, i) =>
    layout.tpGroup(scope.simulatedReplicas + i, s),
  ).filter(scope.needsShadow);
  for (let d = 0; d < scope.simulatedReplicas; d++) {
    const ranks = passRanks(scope, { d, stage: s, tpShadows, ringWaits: input.ringWaits });
    const builder = new PassBuilder(scope.program, combined ? { ...ranks, exchangesAside: true } : ranks);
    const pass = (op: PipeOp) => ({ op, virtualStage: op.chunk * ctx.pp + s, templates: input.templates });
    for (const unit of units) {
      if ('op' in unit) {
        const p = pass(unit.op);
        passes.set(
          key(d, p.virtualStage, unit.op.microBatch, unit.op.kind),
          compilePass(scope, builder, { ...p, blocks: chunkBlocks[p.virtualStage] }),
        );
        continue;
      }
      const [f, b] = [pass(unit.forward), pass(unit.backward)];
      const [fRec, bRec] = compileCombinedPass(scope, builder, [f, b], chunkBlocks);
      passes.set(key(d, f.virtualStage, unit.forward.microBatch, 'F'), fRec);
      passes.set(key(d, b.virtualStage, unit.backward.microBatch, 'B'), bRec);
    }
    // Whatever TP collective is still outstanding at the end is waited for by the optimizer.
    if (builder.pendingTp.length > 0)
      plan.gradients.pendingTp = [...(plan.gradients.pendingTp ?? []), ...builder.pendingTp];
  }
  return plan;
}

/** The ranks replica d's TP group of stage `stage` runs on, with their jitter and context-parallel ring. */
function passRanks(
  scope: CompileScope,
  at: { d: number; stage: number; tpShadows: (readonly number[])[]; ringWaits?: RingWaits },
): PassRanks {
  const { ctx, layout } = scope;
  const { setup } = ctx;
  const group = layout.tpGroup(at.d, at.stage);
  const members = scope.simulatedTp === ctx.tp ? group : group.slice(0, scope.simulatedTp);
  const ring =
    ctx.cp > 1
      ? cpRing(
          layout,
          at.d,
          at.stage,
          members,
          scope.simulatedSet,
          scope.needsShadow,
          setup.cluster.node.gpusPerNode,
          at.ringWaits,
        )
      : undefined;
  const jitter = members.map((r) => {
    const jittered = jitterer(setup.seed, `compute-jitter/rank-${r}`, setup.noise.computeJitter);
    const speed = scope.speedOf(r);
    return speed === 1 ? jittered : (ns: number) => jittered(Math.round(ns * speed));
  });
  return {
    group,
    members,
    shadows: at.tpShadows,
    jitter,
    ring,
    ...(ctx.ep > 1 ? { ep: expertGroups(scope, at, (t, d) => layout.epGroup(t, d, at.stage, ctx.ep, ctx.etp)) } : {}),
    ...(ctx.etp > 1 && ctx.etp !== ctx.tp
      ? { etp: expertGroups(scope, at, (t, d) => layout.etpGroup(t, d, at.stage, ctx.etp)) }
      : {}),
  };
}

/**
 * The expert-parallel (or expert tensor-parallel) group of replica d's first TP rank on stage `stage`, and the stage's
 * other such groups as shadows: symmetric mode simulates one replica, whose all-to-alls move their whole group's data
 * while every other group's run alongside.
 */
function expertGroups(
  scope: CompileScope,
  at: { d: number; stage: number },
  groupOf: (t: number, d: number) => readonly number[],
) {
  const { layout } = scope;
  const group = groupOf(0, at.d);
  const others = new Set<readonly number[]>();
  for (let d = 0; d < layout.dp; d++) for (let t = 0; t < layout.tp; t++) others.add(groupOf(t, d));
  others.delete(group);
  return { group, shadows: [...others].filter(scope.needsShadow) };
}

/** One pass through one virtual stage: the all-gather of what it received when it needs one, then its blocks. */
function compilePass(
  scope: CompileScope,
  builder: PassBuilder,
  pass: { op: StagePlan['schedule'][number]; virtualStage: number; blocks: Block[]; templates: PassTemplates },
): PassRecord {
  const { ctx } = scope;
  const { op, virtualStage: vs } = pass;
  const virtualStages = ctx.virtualStageLayers.length;
  const rec = builder.newRecord(op);
  const list = op.kind === 'F' ? pass.blocks : [...pass.blocks].reverse();
  const start = passStartHostNs(ctx.setup.framework, { kind: op.kind, virtualStage: vs, virtualStages, tp: ctx.tp });
  // Each TP rank received 1/t of the activations (or gradients); the pass starts with their all-gather.
  if (ctx.tp > 1 && !ctx.setup.parallel.sequenceParallel && (op.kind === 'F' ? vs > 0 : vs < virtualStages - 1)) {
    builder.gatherReceived(
      rec,
      op.kind === 'F' ? 'activations' : 'gradients',
      op,
      ctx.tokensPerRank * ctx.setup.model.hidden * ctx.precision.elementBytes,
    );
  }
  for (const b of list)
    builder.addBlock(b, pass.templates.get(b)![op.kind], op, rec, b === list[0] ? start : undefined);
  addAmaxReduction(scope, builder, { op, virtualStage: vs, blocks: pass.blocks });
  return rec;
}

/**
 * A forward and a backward of other micro-batches run as one combined step (combinedPass.ts): each pass's blocks in
 * its own order, the two taking turns at their expert all-to-alls. Models with experts train in 16 bits with
 * sequence parallelism, so neither pass starts with a TP gather or ends with an FP8 amax reduction.
 */
function compileCombinedPass(
  scope: CompileScope,
  builder: PassBuilder,
  [f, b]: { op: PipeOp; virtualStage: number; templates: PassTemplates }[],
  chunkBlocks: Block[][],
): [PassRecord, PassRecord] {
  const { ctx } = scope;
  const virtualStages = ctx.virtualStageLayers.length;
  const side = (p: typeof f, blocks: Block[]) => ({
    op: p.op,
    blocks,
    rec: builder.newRecord(p.op),
    startHostNs: passStartHostNs(ctx.setup.framework, {
      kind: p.op.kind,
      virtualStage: p.virtualStage,
      virtualStages,
      tp: ctx.tp,
    }),
  });
  const forward = side(f, chunkBlocks[f.virtualStage]);
  const backward = side(b, [...chunkBlocks[b.virtualStage]].reverse());
  addCombinedPasses(builder, f.templates, backward, forward);
  return [forward.rec, backward.rec];
}

/**
 * FP8 delayed scaling's one amax all-reduce of a chunk's pass over the whole stage (fp8.ts `fp8AmaxReductionBytes`).
 */
function addAmaxReduction(
  scope: CompileScope,
  builder: PassBuilder,
  pass: { op: PipeOp; virtualStage: number; blocks: Block[] },
): void {
  const { ctx, layout } = scope;
  if (ctx.setup.training.fp8?.recipe !== 'delayed') return;
  const layers = pass.blocks.filter((b) => b.layer >= 0 && b.layer < ctx.setup.model.layers).length;
  const group = layout.stageGroup(pass.virtualStage % ctx.pp);
  if (layers === 0 || group.length === 1) return;
  const bytes = fp8AmaxReductionBytes(layers, pass.op.kind);
  builder.blockingCollective('fp8 amax all-reduce', { op: 'all_reduce', group, bytes }, pass.op);
}

/**
 * Whether a shadow group's traffic can meet simulated traffic: a group inside one node that holds no
 * simulated rank only uses that node's private links, so its flows change nothing and are skipped.
 */
function shadowNeed(simulated: readonly number[], gpusPerNode: number): (group: readonly number[]) => boolean {
  const nodes = new Set(simulated.map((r) => Math.floor(r / gpusPerNode)));
  return (group) => {
    const node = Math.floor(group[0] / gpusPerNode);
    for (let i = 1; i < group.length; i++) if (Math.floor(group[i] / gpusPerNode) !== node) return true;
    return nodes.has(node);
  };
}
