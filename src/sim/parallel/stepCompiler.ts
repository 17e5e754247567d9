import { Program, type StreamKind } from '../program/types.js';
import type { StepSetup } from '../setup.js';
import type { Block, Op } from '../workload/ops.js';
import { buildBlocks } from '../workload/transformerOps.js';
import { resolveAttentionKernel } from '../workload/attentionKernels.js';
import { hostCost, scheduleRules, type FrameworkSpec } from '../workload/framework.js';
import { GET_BATCH_PIPE_CALLS } from '../workload/megatronOps.js';
import { jitterer } from '../engine/random.js';
import { gpuSpeedFactors } from './gpuSpeed.js';
import { ParallelLayout, splitOf } from './layout.js';
import { peakInFlight, stageSchedule, type PipeOp } from './schedules.js';
import { tpSyncPoints, type TpSync } from './tpSync.js';
import { cpSyncPoints } from './contextParallel.js';
import { cpRing, issueCpExchange, RingWaits, type CpRing } from './cpRing.js';
import { overlapTpSyncs, withOverlapSmMargin } from './tpCommOverlap.js';
import { passTemplate, type PassTemplate } from './blockTemplate.js';
import { addGradientReduction, type StageGradients } from './gradReduction.js';

/** What the compiler produced besides the program, for reports, memory and tests. */
export interface StepPlan {
  program: Program;
  layout: ParallelLayout;
  microBatchesPerStep: number;
  /** Per pipeline stage: its blocks (all chunks), schedule and peak passes in flight. */
  stages: StagePlan[];
}

export interface StagePlan {
  stage: number;
  /** Blocks of each chunk of this stage (chunk c is virtual stage c·pp + stage). */
  chunks: Block[][];
  schedule: PipeOp[];
  /** Most (micro-batch, chunk) forwards alive at once: sets activation memory. */
  peakInFlight: number;
  gradients: StageGradients;
}

/** Compute dtype and bytes per activation element for a training precision. */
export function precisionInfo(precision: StepSetup['training']['precision']) {
  const mixed = precision === 'bf16' || precision === 'fp16';
  return { dtype: precision, mixed, elementBytes: mixed ? 2 : 4 };
}

/** The tasks one pass (F or B of one micro-batch through one model chunk) became, per TP rank. */
export interface PassRecord {
  first: number[];
  last: number[];
  /**
   * Per TP rank: the host task that follows the host's wait for the GPU at the start of a pass (`passStart`);
   * the activations or gradients this pass receives gate it too.
   */
  firstHost?: number[];
  /**
   * With TP and no sequence parallelism: the all-gather of the 1/t shards this pass received (Megatron's
   * scatter/gather), on the members' compute streams ahead of the pass; the transfers gate it.
   */
  gather?: number;
  /** Per block in execution order: its first and last compute task per TP rank. */
  blocks: { block: Block; first: number[]; last: number[] }[];
  /** Per TP rank: tensor name → the compute task completing its gradient (backward passes). */
  gradTask?: Map<string, number>[];
}

/** Key of a pass: data-parallel replica, virtual stage, micro-batch, direction. */
export type PassKey = (d: number, vs: number, mb: number, kind: 'F' | 'B') => string;

/**
 * Compiles one training step for any tp × pp × dp split into per-rank task graphs: each pipeline
 * stage runs its schedule of forward/backward passes over its model chunks; inside a pass, TP
 * collectives sit between compute segments (blocking on the compute stream, or overlapping the next
 * GEMM on the TP stream); activations and their gradients move between stages by point-to-point
 * transfers; gradients are reduced over the DP group (DDP buckets or ZeRO), then the optimizer runs.
 */
export function compileStep(setup: StepSetup): StepPlan {
  const { model, training, parallel: par, cluster } = setup;
  const { tp, pp } = par;
  const cp = par.cp ?? 1;
  const v = par.virtualStages;
  const layout = new ParallelLayout(tp, par.dp, pp, par.placement, cp);
  // The d axis: every rank of a stage that holds the same weights (data-parallel replicas × context-parallel ranks).
  const dp = layout.dp;
  const gpu = cluster.node.gpu;
  const { dtype, elementBytes } = precisionInfo(training.precision);
  const m = training.globalBatch / (training.microBatch * par.dp);
  // A context-parallel rank holds 1/cp of each sequence's tokens.
  const tokens = (training.microBatch * training.seqLen) / cp;
  const blocks = buildBlocks(model, { microBatch: training.microBatch, seqLen: training.seqLen, cp, cpCommType: par.cpCommType, dtype, tp, sequenceParallel: par.sequenceParallel, flashAttention: training.flashAttention, recompute: par.recompute, framework: setup.framework, kernels: training.kernels, attentionKernel: resolveAttentionKernel(training.attentionKernel, gpu) });
  const layerBlocks = blocks.filter((b) => b.layer >= 0 && b.layer < model.layers);
  const virtualStages = splitOf(model.arch === 'mlp' ? layerBlocks.length : model.layers, par);
  const chunkBlocks: Block[][] = virtualStages.map((layers, vs) => {
    const list = layers.map((l) => layerBlocks[l]);
    if (vs === 0) list.unshift(...blocks.filter((b) => b.layer < 0));
    if (vs === virtualStages.length - 1) list.push(...blocks.filter((b) => b.layer >= model.layers));
    return list;
  });
  const tpCtx = { model, tp, sequenceParallel: par.sequenceParallel, style: par.tpStyle, tokens, elementBytes, asyncGradReduce: setup.framework?.asyncTpGradReduce ?? true };
  const cpCtx = { model, cp, tp, tokens, elementBytes, commType: par.cpCommType };
  const overlap = par.tpCommOverlap;
  const syncPoints = (names: readonly string[]) => {
    const tpSyncs = tpSyncPoints(names, tpCtx);
    return [...(overlap ? overlapTpSyncs(names, tpSyncs) : tpSyncs), ...cpSyncPoints(names, cpCtx)].sort((a, b) => a.afterOp - b.afterOp);
  };
  // With TP communication overlap, some GEMMs leave SMs to the communication kernels beside them.
  const opsOf = (ops: readonly Op[]) => (overlap ? ops.map((o) => withOverlapSmMargin(o, overlap)) : ops);
  const collHostNs = setup.framework?.hostOpNs ?? 0;
  const fw = setup.framework;
  const templates = new Map<Block, { F: PassTemplate; B: PassTemplate }>();
  for (const b of blocks) {
    templates.set(b, {
      F: passTemplate(opsOf(b.forward), syncPoints(b.forward.map((o) => o.name)), 'forward', gpu, dtype, collHostNs),
      B: passTemplate(opsOf(b.backward), syncPoints(b.backward.map((o) => o.name)), 'backward', gpu, dtype, collHostNs),
    });
  }

  // Symmetric mode simulates one data-parallel replica and, in it, one rank per TP group: the ranks of
  // a TP group run the same kernels and meet at every TP collective, so they move in lockstep. The
  // others' traffic (pipeline sends, gradient reduction) still runs, as shadow flows.
  const replicas = setup.fidelity === 'full' ? dp : 1;
  // (Jittered kernels would break the lockstep; scenarios then run in full fidelity anyway.)
  const tpSim = setup.fidelity === 'full' || setup.noise.computeJitter > 0 ? tp : 1;
  const simulated: number[] = [];
  for (let r = 0; r < layout.world; r++) {
    const c = layout.coords(r);
    if (c.d < replicas && c.t < tpSim) simulated.push(r);
  }
  const program = new Program(layout.world, simulated);
  const speedOf = gpuSpeedFactors(setup, layout.world, (r) => layout.coords(r).p);
  const shadowFilter = needsShadow(simulated, cluster.node.gpusPerNode);
  const passes = new Map<string, PassRecord>();
  const key = (d: number, vs: number, mb: number, kind: 'F' | 'B') => `${d}/${vs}/${mb}/${kind}`;
  const stages: StagePlan[] = [];
  const simulatedSet = new Set(simulated);
  // Only when every rank of a ring is simulated (full fidelity) is there a predecessor's send to wait for.
  const ringWaits = replicas === layout.dp ? new RingWaits(cp) : undefined;
  for (let s = 0; s < pp; s++) {
    const schedule = stageSchedule(par.schedule, pp, s, m, v, scheduleRules(setup.framework));
    const chunks = Array.from({ length: v }, (_, c) => chunkBlocks[c * pp + s]);
    stages.push({ stage: s, chunks, schedule, peakInFlight: peakInFlight(schedule), gradients: { buckets: [], paramsPerRank: 0 } });
    const tpShadows = Array.from({ length: dp - replicas }, (_, i) => layout.tpGroup(replicas + i, s)).filter(shadowFilter);
    for (let d = 0; d < replicas; d++) {
      const group = layout.tpGroup(d, s);
      const members = tpSim === tp ? group : group.slice(0, tpSim);
      const ring = cp > 1 ? cpRing(layout, d, s, members, simulatedSet, shadowFilter, cluster.node.gpusPerNode, ringWaits) : undefined;
      const jitter = members.map((r) => {
        const jittered = jitterer(setup.seed, `compute-jitter/rank-${r}`, setup.noise.computeJitter);
        const speed = speedOf(r);
        return speed === 1 ? jittered : (d: number) => jittered(Math.round(d * speed));
      });
      let carry: number[] = [];
      const lastCompute: number[] = [];
      const hostCarry: number[] = members.map(() => 0);
      for (const op of schedule) {
        const vs = op.chunk * pp + s;
        const rec: PassRecord = { first: [], last: [], blocks: [], gradTask: op.kind === 'B' ? members.map(() => new Map()) : undefined };
        const list = op.kind === 'F' ? chunkBlocks[vs] : [...chunkBlocks[vs]].reverse();
        const start = passStart(fw, op.kind, vs, virtualStages.length, tp);
        // Each TP rank received 1/t of the activations (or gradients); the pass starts with their all-gather.
        if (tp > 1 && !par.sequenceParallel && (op.kind === 'F' ? vs > 0 : vs < virtualStages.length - 1)) {
          const what = op.kind === 'F' ? 'activations' : 'gradients';
          rec.gather = program.collective('tp-collective', `all-gather received ${what} mb${op.microBatch}`, { op: 'all_gather', group, bytes: tokens * model.hidden * elementBytes, shadowGroups: tpShadows.length > 0 ? tpShadows : undefined }, [], op.microBatch, 'compute', members);
        }
        for (const b of list) {
          const t = templates.get(b)![op.kind];
          const entry = { block: b, first: [] as number[], last: [] as number[] };
          carry = instantiatePass(program, t, group, members, tpShadows, op, carry, rec, lastCompute, hostCarry, jitter, `${op.kind === 'F' ? 'fwd' : 'bwd'} ${b.name} mb${op.microBatch}`, entry, b === list[0] ? start : undefined, ring);
          rec.blocks.push(entry);
        }
        passes.set(key(d, vs, op.microBatch, op.kind), rec);
      }
      // Whatever TP collective is still outstanding at the end is waited for by the optimizer.
      if (carry.length > 0) stages[s].gradients.pendingTp = [...(stages[s].gradients.pendingTp ?? []), ...carry];
    }
  }

  ringWaits?.link(program);
  addPipelineTransfers(program, layout, passes, key, m, v, tokens * model.hidden * elementBytes / (tp > 1 ? tp : 1), replicas, tpSim, shadowFilter);
  for (const st of stages) addGradientReduction(program, setup, layout, st, passes, key, replicas, tpSim, shadowFilter, stages[0].gradients);
  return { program, layout, microBatchesPerStep: m, stages };
}

/**
 * Whether a shadow group's traffic can meet simulated traffic: a group inside one node that holds no
 * simulated rank only uses that node's private links, so its flows change nothing and are skipped.
 */
function needsShadow(simulated: readonly number[], gpusPerNode: number): (group: readonly number[]) => boolean {
  const nodes = new Set(simulated.map((r) => Math.floor(r / gpusPerNode)));
  return (group) => {
    const node = Math.floor(group[0] / gpusPerNode);
    for (let i = 1; i < group.length; i++) if (Math.floor(group[i] / gpusPerNode) !== node) return true;
    return nodes.has(node);
  };
}

/**
 * Instantiates one pass of one block on the simulated `members` of a TP group (`lastCompute` tracks
 * each member's latest compute task across passes); returns the TP collectives still to wait for. The
 * collectives move the whole group's data; they occupy the members' streams.
 * When the template models host costs, each segment also gets a task on the rank's host stream: it
 * runs the host work left over from the previous segment plus this segment's lead (blockTemplate), and
 * the segment's compute task waits for it; host work past the lead carries to the next segment
 * (`hostCarry`). A segment whose first op blocks the host first finishes the carried work, then waits
 * for the rank's last compute task.
 */
function instantiatePass(program: Program, t: PassTemplate, group: readonly number[], members: readonly number[], shadows: readonly (readonly number[])[], op: PipeOp, carry: number[], rec: PassRecord, lastCompute: number[], hostCarry: number[], jitter: ((d: number) => number)[], label: string, entry: { first: number[]; last: number[] }, startHostNs?: number, ring?: CpRing): number[] {
  // A sync's tasks (a TP collective: one; a context-parallel exchange: one send per member): the next op waits for all.
  const issued = new Map<TpSync, number[]>();
  let waiting = carry;
  const issue = (syncs: readonly TpSync[]) => {
    for (const sync of syncs) {
      const deps = members.map((_, i) => lastCompute[i]).filter((x): x is number => x !== undefined);
      if (sync.group === 'cp') {
        issued.set(sync, issueCpExchange(program, sync, `${sync.label} mb${op.microBatch}`, members, ring!, lastCompute, op.microBatch));
        continue;
      }
      const stream: StreamKind = sync.neededBy > sync.afterOp + 1 ? 'tp' : 'compute';
      issued.set(sync, [program.collective('tp-collective', sync.label, { op: sync.op, group, bytes: sync.bytes, shadowGroups: shadows.length > 0 ? shadows : undefined }, deps, op.microBatch, stream, members)]);
    }
  };
  t.segments.forEach((seg, k) => {
    issue(seg.issueBefore);
    const deps = [...waiting, ...seg.waitFor.flatMap((s) => issued.get(s) ?? [])];
    const received = ring?.waited ? seg.waitFor.filter((s) => s.group === 'cp' && issued.has(s)).map((s) => ({ sync: s, sends: issued.get(s)! })) : [];
    waiting = [];
    for (const s of seg.waitFor) issued.delete(s);
    const segmentTasks: number[] = [];
    const passSync = k === 0 && startHostNs !== undefined;
    members.forEach((rank, i) => {
      const own = deps.length === 0 && !t.hostModelled ? deps : [...deps];
      if (t.hostModelled) {
        const hostDeps: number[] = [];
        if ((seg.syncBefore || passSync) && lastCompute[i] !== undefined) {
          if (hostCarry[i] > 0) program.local(rank, 'host', 'other', `host: ${label}`, Math.round(hostCarry[i]), [], op.microBatch);
          hostCarry[i] = 0;
          hostDeps.push(lastCompute[i]);
        }
        const hostNs = Math.round(hostCarry[i] + seg.hostLeadNs + (passSync ? startHostNs : 0));
        if (hostNs > 0 || hostDeps.length > 0 || passSync) {
          const hostId = program.local(rank, 'host', 'other', `host: ${label}`, hostNs, hostDeps, op.microBatch);
          own.push(hostId);
          if (passSync) (rec.firstHost ??= [])[i] = hostId;
        }
        hostCarry[i] = seg.hostNs - seg.hostLeadNs;
      }
      const id = program.local(rank, 'compute', seg.kind, label, jitter[i](seg.durationNs), own, op.microBatch);
      segmentTasks.push(id);
      if (rec.first[i] === undefined) rec.first[i] = id;
      if (entry.first[i] === undefined) entry.first[i] = id;
      rec.last[i] = id;
      entry.last[i] = id;
      lastCompute[i] = id;
      if (rec.gradTask) for (const tensor of seg.gradTensors) rec.gradTask[i].set(tensor, id);
    });
    for (const w of received) ring!.waited!(label, w.sync, w.sends, segmentTasks);
  });
  issue(t.issueAfter);
  if (t.hostModelled) for (let i = 0; i < hostCarry.length; i++) hostCarry[i] += t.hostAfterNs;
  return [...waiting, ...[...issued.values()].flat()];
}

/**
 * The framework's host wait at the start of a pass through virtual stage `vs` of `stages` (kind F or B):
 * DeepSpeed's partitioned pipeline tensors with TP (`partitionedPipeSync`: a non-first stage waits for the
 * activations before a forward, a non-last stage for the gradients before a backward), and a last stage that
 * does not also hold the embedding loading its own batch before each forward (`lastStageLoadsBatch`:
 * `next(data_iterator)` and `get_batch_pipe`, whose blocking copies queue behind the activations' receive).
 * Returns the host ns of work after the wait (the load's), or undefined when the host does not wait. The load's
 * host work is put after the wait, though its first calls precede its first blocking copy: an upper bound by a
 * few calls.
 */
function passStart(fw: FrameworkSpec | undefined, kind: 'F' | 'B', vs: number, stages: number, tp: number): number | undefined {
  if (!fw || stages === 1) return undefined;
  const partitioned = fw.partitionedPipeSync && tp > 1 && (kind === 'F' ? vs > 0 : vs < stages - 1);
  const ownLoad = fw.lastStageLoadsBatch && kind === 'F' && vs === stages - 1;
  if (!partitioned && !ownLoad) return undefined;
  return ownLoad ? hostCost(fw, 1 + GET_BATCH_PIPE_CALLS.plain, GET_BATCH_PIPE_CALLS.collectives) : 0;
}

/**
 * Point-to-point transfers between consecutive virtual stages: the forward of virtual stage k for a
 * micro-batch needs the activations of stage k − 1; its backward needs the gradients from stage
 * k + 1. Each TP rank sends its 1/t share (Megatron's scatter/gather optimisation); without sequence
 * parallelism the receiving pass all-gathers the shares first (`PassRecord.gather`).
 */
function addPipelineTransfers(program: Program, layout: ParallelLayout, passes: Map<string, PassRecord>, key: PassKey, m: number, v: number, bytes: number, replicas: number, tpSim: number, shadowFilter: (g: readonly number[]) => boolean): void {
  const pp = layout.pp;
  const V = pp * v;
  if (V === 1) return;
  // One shadow list per (TP rank, from, to): collective plans are cached on the list's identity.
  const shadowLists = new Map<number, (readonly number[])[]>();
  for (let d = 0; d < replicas; d++) {
    for (let mb = 0; mb < m; mb++) {
      for (let vs = 0; vs < V; vs++) {
        for (const kind of ['F', 'B'] as const) {
          const from = kind === 'F' ? vs - 1 : vs + 1;
          if (from < 0 || from >= V) continue;
          const src = passes.get(key(d, from, mb, kind))!;
          const dst = passes.get(key(d, vs, mb, kind))!;
          // Every TP rank of the receiving stage needs all shards (they are all-gathered there).
          for (let t = 0; t < tpSim; t++) {
            const a = layout.rank(t, d, from % pp);
            const b = layout.rank(t, d, vs % pp);
            const label = `${kind === 'F' ? 'activations' : 'gradients'} mb${mb} stage ${from % pp}→${vs % pp}`;
            const sKey = ((d * layout.tp + t) * pp + (from % pp)) * pp + (vs % pp);
            let shadows = shadowLists.get(sKey);
            if (!shadows) {
              shadows = [];
              for (let e = replicas; e < layout.dp; e++) {
                const g = layout.pair(layout.rank(t, e, from % pp), layout.rank(t, e, vs % pp));
                if (shadowFilter(g)) shadows.push(g);
              }
              // The TP ranks that are not simulated send their shards alongside (replica d and the others).
              if (t === 0) {
                for (let u = tpSim; u < layout.tp; u++) {
                  for (const e of [d, ...Array.from({ length: layout.dp - replicas }, (_, i) => replicas + i)]) {
                    const g = layout.pair(layout.rank(u, e, from % pp), layout.rank(u, e, vs % pp));
                    if (shadowFilter(g)) shadows.push(g);
                  }
                }
              }
              shadowLists.set(sKey, shadows);
            }
            const x = program.transfer('pp-send', label, layout.pair(a, b), bytes, [src.last[t]], mb, shadows.length > 0 ? shadows : undefined);
            if (dst.gather !== undefined) program.addDep(dst.gather, x);
            for (let u = 0; u < tpSim; u++) {
              program.addDep(dst.first[u], x);
              // A host that waits for its GPU at the start of a pass also waits for what the pass receives.
              if (dst.firstHost?.[u] !== undefined) program.addDep(dst.firstHost[u], x);
            }
          }
        }
      }
    }
  }
}
