import { gpuSpeedFactors } from './gpuSpeed.js';
import { addParamGathers } from './paramGather.js';
import { MiB } from '../engine/units.js';
import { OFFLOAD_HOST_GRADIENT_BYTES } from '../memory/memory.js';
import type { Program } from '../program/types.js';
import type { StepSetup } from '../setup.js';
import { elementsPerTpRank, parameterTensors, tiedEmbeddingCopy, type ParamTensor } from '../workload/model.js';
import { opTimeNs, optimizerOp } from '../workload/kernelTime.js';
import type { Block } from '../workload/ops.js';
import { assignReductionBuckets, reductionOverlaps, type GradBucket } from './buckets.js';
import { deepspeedGatherGroups, deepspeedReduceBuckets } from './zero3Collectives.js';
import type { ParallelLayout } from './layout.js';
import type { PassKey, PassRecord, StagePlan } from './stepCompiler.js';

/** Gradient bookkeeping of one pipeline stage (the same for every TP rank). */
export interface StageGradients {
  buckets: GradBucket[];
  /** Parameters one rank of this stage holds (after TP, before ZeRO sharding). */
  paramsPerRank: number;
  /** TP collectives still outstanding after the last pass; the optimizer waits for them. */
  pendingTp?: number[];
  /**
   * Per simulated TP rank, the first stage's last gradient communication and optimizer tasks: with tied embeddings
   * and a pipeline, the embedding-gradient all-reduce with the last stage comes between them.
   */
  tiedEnds?: { done: number[][]; optimizers: number[][] };
}

function stageTensors(model: StepSetup['model'], st: StagePlan, pp: number): { tensors: ParamTensor[]; vsOf: Map<string, number>; readyWith: Map<string, string> } {
  const names = new Map<string, number>();
  st.chunks.forEach((blocks, c) => {
    for (const b of blocks) for (const op of b.backward) for (const t of op.gradParams ?? []) names.set(t, c * pp + st.stage);
  });
  const tensors = parameterTensors(model).filter((t) => names.has(t.name));
  const readyWith = new Map<string, string>();
  // The last stage's copy of tied embeddings is its own parameter there. Its gradient comes from the LM head, in the
  // last chunk, whose backward ends with the final norm's: that gradient's completion stands for the copy's.
  const copy = pp > 1 && st.stage === pp - 1 ? tiedEmbeddingCopy(model) : undefined;
  if (copy) {
    tensors.push(copy);
    names.set(copy.name, (st.chunks.length - 1) * pp + st.stage);
    const finalNorm = tensors.find((t) => t.layer === model.layers && t !== copy);
    if (finalNorm) readyWith.set(copy.name, finalNorm.name);
  }
  return { tensors, vsOf: names, readyWith };
}

/**
 * Adds, for one pipeline stage, the data-parallel gradient reduction and the optimizer step:
 * ZeRO 0 (PyTorch DDP / Megatron): all-reduce of gradient buckets, in the last micro-batch's
 * backward when `ddp.overlap`, else after it; ZeRO 1: the same with reduce-scatter (in DDP buckets for
 * Megatron's distributed optimizer, in reduce_bucket_size ones for DeepSpeed's), then the
 * optimizer on a 1/dp shard and an all-gather of the updated weights; ZeRO 2: reduce-scatter of
 * buckets in every micro-batch (DeepSpeed reduces at each micro-step) with `overlapComm`; ZeRO 3:
 * also gathers each block's weights before its forward and backward (one block ahead) and
 * reduce-scatters its gradients right after its backward. CPU offload copies the gradient shard to
 * the host, runs Adam there and copies the weights back.
 */
export function addGradientReduction(program: Program, setup: StepSetup, layout: ParallelLayout, st: StagePlan, passes: Map<string, PassRecord>, key: PassKey, simulatedReplicas: number, simulatedTp = layout.tp, shadowFilter: (g: readonly number[]) => boolean = () => true, first?: StageGradients): void {
  const par = setup.parallel;
  const { tp, pp, dp } = layout;
  const mixed = setup.training.precision === 'bf16' || setup.training.precision === 'fp16';
  // Megatron's main_grad buffers keep 16-bit training's gradients in fp32 (parallel.fp32Gradients).
  const gradBytes = mixed && !par.fp32Gradients ? 2 : 4;
  // DeepSpeed's communication_data_type fp32 reduces 16-bit gradients in fp32 (parallel.fp32Reduction).
  const wirePerStored = mixed && par.fp32Reduction ? 4 / gradBytes : 1;
  // dp here is the d axis (replicas × context-parallel ranks: all reduce the same gradients); micro-batches go by replica.
  const m = setup.training.globalBatch / (setup.training.microBatch * setup.parallel.dp);
  const { tensors, vsOf, readyWith } = stageTensors(setup.model, st, pp);
  const tied = pp > 1 ? tiedEmbeddingCopy(setup.model) : undefined;
  const paramsPerRank = tensors.reduce((a, t) => a + elementsPerTpRank(t, tp), 0);
  const sharded = tensors.map((t) => ({ ...t, elements: elementsPerTpRank(t, tp) }));
  const zero = par.zero;
  // DDP's buckets without ZeRO and for Megatron's distributed optimizer, DeepSpeed's reduce_bucket_size otherwise.
  const buckets = assignReductionBuckets(sharded, gradBytes, par);
  st.gradients.buckets = buckets;
  st.gradients.paramsPerRank = paramsPerRank;
  const overlap = reductionOverlaps(par);
  const lastMb = (t: number, d: number) => {
    let last = -1;
    for (let c = 0; c < st.chunks.length; c++) {
      const rec = passes.get(key(d, c * pp + st.stage, m - 1, 'B'))!;
      last = Math.max(last, rec.last[t]);
    }
    return last;
  };

  for (let t = 0; t < simulatedTp; t++) {
    const group = layout.dpGroup(t, st.stage);
    // Symmetric mode simulates only the first replicas; collectives still move the whole group's data.
    const replicas = [...Array(simulatedReplicas).keys()];
    const members = group.slice(0, simulatedReplicas);
    // ... and one TP rank: the DP groups of the other TP ranks reduce alongside, as shadows.
    const shadows = t === 0 ? Array.from({ length: tp - simulatedTp }, (_, i) => layout.dpGroup(simulatedTp + i, st.stage)).filter(shadowFilter) : [];
    const shadowGroups = shadows.length > 0 ? shadows : undefined;
    let lastComm = -1;
    // Megatron's --overlap-param-gather: the weight all-gather opens the step (ahead of the reductions on the comm stream).
    const gatherAhead = dp > 1 && zero === 1 && par.overlapParamGather === true;
    if (gatherAhead) {
      const layerOf = new Map(tensors.map((x) => [x.name, x.layer]));
      addParamGathers({ program, stage: st, passes, key, pp, t, replicas, buckets, layerOf, weightBytes: mixed ? 2 : 4, gradientBytes: gradBytes, group, members, shadowGroups, aligned: pp > 1 && par.schedule === 'interleaved' });
    }
    if (dp > 1 && zero === 3) {
      const zc = par.zeroConfig;
      const deepspeed = zc.stage3 === 'deepspeed' ? { reduceBucketElements: (zc.reduceBucketMB * MiB) / gradBytes, prefetchBucketElements: zc.prefetchBucketElements, persistenceThresholdElements: zc.persistenceThresholdElements } : undefined;
      lastComm = addZero3(program, layout, passes, key, t, m, { weight: mixed ? 2 : 4, gradient: gradBytes * wirePerStored }, new Map(tensors.map((x) => [x.name, x])), replicas, members, overlap, deepspeed, shadowGroups);
    }
    else if (dp > 1) {
      const rounds = zero === 2 ? [...Array(m).keys()] : [m - 1];
      for (const mb of rounds) {
        for (const bk of buckets) {
          const deps = replicas.map((d) => {
            if (!overlap) return mb === m - 1 ? lastMb(t, d) : lastOfPass(passes, key, d, st, pp, mb, t);
            const lastTensor = bk.tensors[bk.tensors.length - 1];
            const rec = passes.get(key(d, vsOf.get(lastTensor)!, mb, 'B'))!;
            return rec.gradTask![t].get(readyWith.get(lastTensor) ?? lastTensor) ?? rec.last[t];
          });
          const op = zero === 0 ? 'all_reduce' : 'reduce_scatter';
          lastComm = program.collective(zero === 0 ? 'dp-allreduce' : 'dp-reducescatter', `${op.replace('_', '-')} bucket ${bk.index} mb${mb} (${(bk.bytes / MiB).toFixed(1)} MiB)`, { op, group, bytes: bk.bytes * wirePerStored, shadowGroups }, deps, mb, 'comm', members);
        }
      }
    }
    // Tied embeddings over a pipeline: the first and last stages all-reduce the embedding's gradient after their
    // data-parallel reduction and before either steps (Megatron's _allreduce_word_embedding_grads). It goes on the
    // tp stream: on the comm stream the first stage's weight all-gather, made earlier, would sit ahead of it.
    // One per replica: each pair of ends waits for its own gradients, and gates its own two optimizer steps.
    const embeddingSyncs: number[] = [];
    if (tied && st.stage === pp - 1 && first?.tiedEnds) {
      const firstEnds = first.tiedEnds;
      // The pairs nobody simulates (other replicas, other TP ranks) exchange alongside, as shadows.
      const ends = (u: number, e: number) => layout.pair(layout.rank(u, e, 0), layout.rank(u, e, pp - 1));
      const shadowsOf = t === 0
        ? [...Array.from({ length: dp - replicas.length }, (_, i) => ends(0, replicas.length + i)),
          ...Array.from({ length: tp - simulatedTp }, (_, u) => Array.from({ length: dp }, (_, e) => ends(simulatedTp + u, e))).flat()].filter(shadowFilter)
        : [];
      replicas.forEach((d, i) => {
        const pair = ends(t, d);
        const deps = [...firstEnds.done[t], lastComm >= 0 ? lastComm : lastMb(t, d), ...(first.pendingTp ?? [])];
        const sync = program.collective('dp-allreduce', 'all-reduce tied embedding gradients (first and last stage)', { op: 'all_reduce', group: pair, bytes: elementsPerTpRank(tied, tp) * gradBytes, shadowGroups: shadowsOf.length > 0 ? shadowsOf : undefined }, deps, -1, 'tp', pair);
        program.addDep(firstEnds.optimizers[t][i], sync);
        embeddingSyncs.push(sync);
      });
    }
    const shard = zero >= 1 ? paramsPerRank / dp : paramsPerRank;
    const speedOf = gpuSpeedFactors(setup, layout.world, (r) => layout.coords(r).p);
    const optimizerIds: number[] = [];
    replicas.forEach((d, i) => {
      const rank = layout.rank(t, d, st.stage);
      const deps = [...(lastComm >= 0 ? [lastComm] : []), ...(embeddingSyncs.length > 0 ? [embeddingSyncs[i]] : []), ...(st.gradients.pendingTp ?? [])];
      if (par.offload === 'cpu') {
        const pcie = setup.cluster.node.pcieBandwidthGBps;
        // On the copy stream nothing orders the copy after backward by itself: without a gradient reduction
        // (dp 1) it waits for the replica's last backward pass.
        const ready = lastComm >= 0 ? deps : [...deps, lastMb(t, d)];
        // DeepSpeed casts the gradient shard to fp32 on the GPU before the copy to the host's fp32 buffer
        // (stage_1_and_2.py async_inplace_copy_grad_to_fp32_buffer_from_gpu; stage3.py _offload_grad_partition_at_boundary),
        // and copies the updated weights back in their 16-bit type (step: param_buffer_of_bit16_for_cpu_offload_groups).
        const d2h = program.local(rank, 'copy', 'd2h', 'fp32 gradient shard to host', (shard * OFFLOAD_HOST_GRADIENT_BYTES) / pcie + setup.cluster.node.pcieLatencyNs, ready);
        const host = program.local(rank, 'copy', 'host-optimizer', 'host Adam (CPU offload)', hostAdamNs(shard, setup), [d2h]);
        optimizerIds.push(program.local(rank, 'copy', 'h2d', 'weights back to GPU', (shard * (mixed ? 2 : 4)) / pcie + setup.cluster.node.pcieLatencyNs, [host]));
      } else {
        const ns = Math.round(speedOf(rank) * opTimeNs(optimizerOp(shard, { optimizer: setup.training.optimizer, precision: mixed ? 'mixed' : 'fp32', gradientBytes: gradBytes, state: setup.training.optimizerState }), setup.cluster.node.gpu, 'fp32'));
        optimizerIds.push(program.local(rank, 'compute', 'optimizer', 'optimizer step', ns, deps));
      }
    });
    if (tied && st.stage === 0) {
      const ends = (st.gradients.tiedEnds ??= { done: [], optimizers: [] });
      ends.done[t] = lastComm >= 0 ? [lastComm] : replicas.map((d) => lastMb(t, d));
      ends.optimizers[t] = optimizerIds;
    }
    if (dp > 1 && (zero === 1 || zero === 2) && !gatherAhead) {
      program.collective('dp-allgather', 'all-gather updated weights', { op: 'all_gather', group, bytes: paramsPerRank * (mixed ? 2 : 4), shadowGroups }, optimizerIds, -1, 'comm', members);
    }
  }
}

/**
 * Host time of one rank's CPU-Adam update of `shard` parameters: the node's throughput is shared by the processes of
 * all its GPUs, which update their shards at the same time (after the same gradient reduction).
 */
export function hostAdamNs(shard: number, setup: StepSetup): number {
  const node = setup.cluster.node;
  const ranksOnNode = Math.min(node.gpusPerNode, setup.parallel.tp * setup.parallel.pp * setup.parallel.dp * (setup.parallel.cp ?? 1));
  return ((shard * ranksOnNode) / node.hostAdamParamsPerS) * 1e9;
}

function lastOfPass(passes: Map<string, PassRecord>, key: PassKey, d: number, st: StagePlan, pp: number, mb: number, t: number): number {
  let last = -1;
  for (let c = 0; c < st.chunks.length; c++) last = Math.max(last, passes.get(key(d, c * pp + st.stage, mb, 'B'))!.last[t]);
  return last;
}

/** Elements per TP rank of each parameter a block's backward makes a gradient of, in the order it makes them. */
function blockParamElements(block: Block, tp: number, all: Map<string, ParamTensor>): number[] {
  return block.backward.flatMap((op) => (op.gradParams ?? []).map((name) => elementsPerTpRank(all.get(name)!, tp)));
}

/**
 * A block's ZeRO-3 collectives, in elements: FSDP's one all-gather and one reduce-scatter of the whole block, or, given
 * DeepSpeed's reduce bucket, DeepSpeed's per-parameter groups (zero3Collectives.ts). Empty for a block without weights.
 */
function zero3Collectives(block: Block, tp: number, all: Map<string, ParamTensor>, deepspeed: DeepSpeedZero3 | undefined): { gathers: number[]; reductions: number[] } {
  const backwardOrder = blockParamElements(block, tp, all);
  const total = backwardOrder.reduce((a, n) => a + n, 0);
  if (total === 0) return { gathers: [], reductions: [] };
  if (!deepspeed) return { gathers: [total], reductions: [total] };
  return {
    gathers: deepspeedGatherGroups([...backwardOrder].reverse(), deepspeed.prefetchBucketElements, deepspeed.persistenceThresholdElements),
    reductions: deepspeedReduceBuckets(backwardOrder, deepspeed.reduceBucketElements),
  };
}

/** A block's k-th of n collectives of one kind, as the timeline names it (the part only when there are several). */
function partLabel(what: string, block: string, k: number, n: number, mb: number): string {
  return n === 1 ? `${what} ${block} mb${mb}` : `${what} ${block} (${k + 1}/${n}) mb${mb}`;
}

/** DeepSpeed's ZeRO-3 sizes, in elements (undefined: its defaults). */
interface DeepSpeedZero3 {
  reduceBucketElements: number;
  prefetchBucketElements?: number;
  persistenceThresholdElements?: number;
}

/**
 * ZeRO-3: before each block's forward and backward its weights are all-gathered over the DP group, one block ahead
 * (the gathers for block i + 1 are queued before block i's gradient reduce-scatters and may start once block i has
 * started); after a block's backward its gradients are reduce-scattered. FSDP makes one collective of each a block,
 * DeepSpeed one a parameter group and one a reduce bucket (`zero3Collectives`, zero3Collectives.ts), one after another
 * on the comm stream. Pipeline parallelism is excluded (pp = 1), so all passes belong to virtual stage 0.
 * Without `overlap` (overlap_comm false) DeepSpeed issues the gathers and the reductions on the compute stream
 * (parameter_offload.py `__allgather_stream`, stage3.py `reduce_and_partition_stream`: the default stream unless
 * overlap_comm): a block's gather waits for the block before it, and the next block waits for both.
 * Returns the last communication task.
 */
function addZero3(program: Program, layout: ParallelLayout, passes: Map<string, PassRecord>, key: PassKey, t: number, m: number, bytes: { weight: number; gradient: number }, all: Map<string, ParamTensor>, replicas: number[], members: readonly number[], overlap: boolean, deepspeed: DeepSpeedZero3 | undefined, shadowGroups?: readonly (readonly number[])[]): number {
  const group = layout.dpGroup(t, 0);
  let last = -1;
  const ofBlock = new Map<Block, { gathers: number[]; reductions: number[] }>();
  const collectivesOf = (block: Block) => {
    let c = ofBlock.get(block);
    if (!c) ofBlock.set(block, (c = zero3Collectives(block, layout.tp, all, deepspeed)));
    return c;
  };
  // Without overlap: the compute tasks before the next gather (the previous pass's last), and the reduction the next block waits for.
  let before: number[] = [];
  let pendingReduction = -1;
  for (let mb = 0; mb < m; mb++) {
    for (const kind of ['F', 'B'] as const) {
      const recs = replicas.map((d) => passes.get(key(d, 0, mb, kind))!);
      const blocks = recs[0].blocks;
      const gathered = new Set<number>();
      const gather = (i: number) => {
        if (i >= blocks.length || gathered.has(i)) return;
        gathered.add(i);
        const { gathers } = collectivesOf(blocks[i].block);
        if (gathers.length === 0) return;
        const deps = !overlap ? (i > 0 ? recs.map((r) => r.blocks[i - 1].last[t]) : before) : i > 0 ? recs.map((r) => r.blocks[i - 1].first[t]) : [];
        // The gathers of one block follow one another on the comm stream; the block waits for the last.
        for (const [k, elements] of gathers.entries()) {
          last = program.collective('zero-gather', partLabel('all-gather weights', blocks[i].block.name, k, gathers.length, mb), { op: 'all_gather', group, bytes: elements * bytes.weight, shadowGroups }, k === 0 ? deps : [last], mb, 'comm', members);
        }
        for (const r of recs) program.addDep(r.blocks[i].first[t], last);
      };
      for (let i = 0; i < blocks.length; i++) {
        gather(i);
        if (overlap) gather(i + 1);
        else if (pendingReduction >= 0) for (const r of recs) program.addDep(r.blocks[i].first[t], pendingReduction);
        pendingReduction = -1;
        const { reductions } = collectivesOf(blocks[i].block);
        if (kind === 'B' && reductions.length > 0) {
          for (const [k, elements] of reductions.entries()) {
            last = program.collective('dp-reducescatter', partLabel('reduce-scatter gradients', blocks[i].block.name, k, reductions.length, mb), { op: 'reduce_scatter', group, bytes: elements * bytes.gradient, shadowGroups }, k === 0 ? recs.map((r) => r.blocks[i].last[t]) : [last], mb, 'comm', members);
          }
          pendingReduction = last;
        }
      }
      before = recs.map((r) => r.blocks[blocks.length - 1].last[t]);
    }
  }
  return last;
}
