import type { Scenario } from '../scenario/resolve.js';
import type { StepResult } from '../sim/simulateStep.js';
import { precisionInfo } from '../sim/parallel/stepContext.js';
import { padVocab } from '../sim/workload/framework.js';
import { dimMisaligned } from '../sim/workload/kernelTime.js';
import { resolveAttentionKernel } from '../sim/workload/attentionKernels.js';
import { IMBALANCE_SHARE_TO_SAY } from '../sim/stats/bottleneck.js';
import { deepEpRuns } from '../scenario/dispatcherChecks.js';

/** A change to try, as `--set` overrides. */
export interface Candidate {
  label: string;
  sets: string[];
}

/** A change to try and what it gave when simulated. */
export interface Alternative extends Candidate {
  stepTimeS?: number;
  peakBytesPerGpu?: number;
  fits?: boolean;
  /** Why it could not be simulated (the split does not suit the model, say). */
  error?: string;
}

/**
 * The few changes most likely to help, in order of promise, from what bounds the step: keep TP
 * inside the node; interleave the pipeline or give it more micro-batches; bigger micro-batches when
 * memory allows; ZeRO-2 instead of ZeRO-3; overlap the gradient reduction; bigger buckets when small
 * collectives are latency-bound; and, when the job does not fit, 1F1B for a GPipe pipeline (free), recomputation,
 * more ZeRO, offload or more tensor parallelism. A vocabulary whose per-rank share misses the tensor-core alignment is
 * padded first (to a multiple of 64 × tp, as nanoGPT and Netflix's post-training framework pad): it costs nothing.
 */
export function candidateChanges(s: Scenario, r: StepResult): Candidate[] {
  const p = s.parallel;
  const t = s.training;
  const gpn = s.cluster.node.gpusPerNode;
  const m = r.microBatchesPerStep;
  const out: Candidate[] = [];
  // A candidate that leaves Megatron's ZeRO-1 also leaves its overlapped weight gather, which needs it.
  const add = (label: string, ...sets: string[]) =>
    out.push({
      label,
      sets:
        p.overlapParamGather && sets.some((x) => x.startsWith('parallel.zero=') && x !== 'parallel.zero=1')
          ? [...sets, 'parallel.overlapParamGather=false']
          : sets,
    });
  const top = r.bottleneck.exposure[0];
  if (s.model.arch !== 'mlp' && dimMisaligned(s.model.vocab / p.tp, precisionInfo(t.precision).dtype)) {
    const padded = padVocab(s.model.vocab, p.tp, 64);
    add(`vocabulary padded to ${padded} (aligned LM-head GEMMs)`, `model.vocab=${padded}`);
  }
  // ZeRO shards over the ranks that hold the same weights (dp × cp): with one, a higher stage saves nothing.
  const sharded = p.dp * (p.cp ?? 1) > 1;
  // ZeRO-3 does not combine with context parallelism (resolve refuses it).
  const zero3 = (p.cp ?? 1) === 1;
  // GPipe keeps every micro-batch's activations alive; 1F1B at most p, in the same time (the same bubble).
  const gpipe = p.pp > 1 && p.schedule === 'gpipe';
  if (!r.memory.gpuFits) {
    // With m ≤ p micro-batches 1F1B also has all m in flight on the first stage: nothing saved.
    if (gpipe && m > p.pp)
      add(`1F1B schedule (at most ${p.pp} micro-batches in flight instead of ${m})`, 'parallel.schedule=1f1b');
    if (p.recompute !== 'full') add('full activation recompute', 'parallel.recompute=full');
    // Long sequences, whose activations fill the GPU: split each over twice the context-parallel ranks (activations
    // and attention shrink with cp), taken from dp. First when activations are most of the memory.
    const cp = p.cp ?? 1;
    // The factor that would bring the activations into the room the rest leaves (a power of 2, at least 2).
    const act = r.memory.breakdown.activationsBytes;
    const room = r.memory.capacityBytes - (r.memory.peakBytesPerGpu - act);
    let grow = 2;
    while (room > 0 && act / grow > room && grow < p.dp) grow *= 2;
    while (grow > 2 && p.dp % grow !== 0) grow /= 2;
    // With no room at all the rest does not fit either: no split of the sequence helps.
    const canCp =
      room > 0 &&
      s.model.arch !== 'mlp' &&
      t.flashAttention &&
      t.framework === 'none' &&
      p.zero !== 3 &&
      p.dp % grow === 0 &&
      t.seqLen % (2 * grow * cp) === 0;
    const cpCandidate = () =>
      add(
        `context parallel ${grow * cp} (each sequence over ${grow * cp} GPUs)`,
        `parallel.cp=${grow * cp}`,
        `parallel.dp=${p.dp / grow}`,
      );
    const activationBound = act > 0.5 * r.memory.peakBytesPerGpu;
    if (canCp && activationBound) cpCandidate();
    if (p.zero < 3 && p.pp === 1 && sharded && (p.zero + 1 < 3 || zero3))
      add(`ZeRO-${p.zero + 1}`, `parallel.zero=${p.zero + 1}`);
    // The host Adam keeps fp32 state (resolve refuses offload with a reduced one).
    const offloadable = p.offload === 'none' && !t.optimizerState;
    if (p.zero >= 1 && offloadable) add('optimizer offload to CPU', 'parallel.offload=cpu');
    // Each alone may not be enough where both are (ZeRO-Infinity's usual pairing).
    if (p.zero < 3 && p.pp === 1 && sharded && zero3 && offloadable)
      add('ZeRO-3 with optimizer offload to CPU', 'parallel.zero=3', 'parallel.offload=cpu');
    // Adam's moments in bf16 (Megatron's precision-aware optimizer, with its distributed optimizer): 2 bytes per
    // parameter saved on each moment still in fp32; a change to the numerics, which the label says.
    const fp32Moments = (['momentum', 'variance'] as const).filter(
      (part) => (t.optimizerState?.[part] ?? 'fp32') === 'fp32',
    );
    if (t.optimizer === 'adam' && p.offload === 'none' && fp32Moments.length > 0) {
      add(
        `bf16 Adam ${fp32Moments.length === 2 ? 'moments' : fp32Moments[0]} (changes the numerics)`,
        ...fp32Moments.map((part) => `training.optimizerState.${part}=bf16`),
      );
    }
    if (p.tp * 2 <= gpn && s.model.heads % (p.tp * 2) === 0 && p.dp % 2 === 0)
      add(`tp ${p.tp * 2}`, `parallel.tp=${p.tp * 2}`, `parallel.dp=${p.dp / 2}`);
    // Under GPipe half the micro-batch makes twice as many, all in flight: the same activations.
    if (t.microBatch > 1 && !gpipe)
      add(`micro-batch ${Math.floor(t.microBatch / 2)}`, `training.microBatch=${Math.floor(t.microBatch / 2)}`);
    if (canCp && !activationBound) cpCandidate();
  }
  if (s.model.moe) moeCandidates(s, add);
  // Blocking gathers or all-to-alls that lead the exposed communication: the ring overlaps its sends with attention.
  if (top && top.kind === 'cp-exchange' && p.cpCommType !== undefined && p.cpCommType !== 'p2p')
    add('context-parallel ring (p2p) instead of blocking exchanges', 'parallel.cpCommType=p2p');
  // Megatron's distributed optimizer gathers the updated weights after the step unless told to overlap them.
  if (
    top &&
    top.kind === 'dp-allgather' &&
    p.zero === 1 &&
    p.zeroConfig.stage1 !== 'deepspeed' &&
    p.zeroConfig.overlapComm &&
    !p.overlapParamGather
  )
    add(
      'weight all-gather under the next forward (Megatron --overlap-param-gather)',
      'parallel.overlapParamGather=true',
    );
  if (r.bottleneck.bound === 'optimizer on the host')
    add('no optimizer offload (state on the GPUs)', 'parallel.offload=none');
  if (r.memory.host?.fits === false) {
    // The offloaded state is too big for the host: keep it on the GPUs, or spread it over twice the nodes.
    add('no optimizer offload (state on the GPUs)', 'parallel.offload=none');
    if (t.globalBatch % (2 * t.microBatch * p.dp) === 0)
      add(
        `twice the nodes (${2 * s.cluster.nodes})`,
        `cluster.nodes=${2 * s.cluster.nodes}`,
        `parallel.dp=${2 * p.dp}`,
      );
  }
  if (p.tp > gpn && (p.tp / gpn) * p.pp <= s.model.layers)
    add(
      `tp ${gpn} inside the node, pp ${(p.pp * p.tp) / gpn}`,
      `parallel.tp=${gpn}`,
      `parallel.pp=${(p.pp * p.tp) / gpn}`,
    );
  // Stages of unequal compute (the output layer and loss on the last): the split that evens them (stageBalance.ts).
  const even = r.stageBalance?.suggestedLayersPerStage;
  if (even && r.stageBalance!.imbalanceShare >= IMBALANCE_SHARE_TO_SAY) {
    const slots = [
      ...(p.accountForEmbeddingInSplit ? ['parallel.accountForEmbeddingInSplit=false'] : []),
      ...(p.accountForLossInSplit ? ['parallel.accountForLossInSplit=false'] : []),
    ];
    add(
      `layers per stage ${even.join(',')} (evens the stages' compute)`,
      `parallel.layersPerStage=[${even.join(',')}]`,
      ...slots,
    );
  }
  if (p.pp > 1) for (const c of pipelineCandidates(s, m, r.breakdown.bubbleS / r.stepTimeS)) add(c.label, ...c.sets);
  // Not when the pipeline's bubble bounds the step: half as many micro-batches only widen it.
  if (
    r.memory.fits &&
    r.memory.peakBytesPerGpu < 0.6 * r.memory.capacityBytes &&
    t.globalBatch % (2 * t.microBatch * p.dp) === 0 &&
    r.bottleneck.bound !== 'pipeline bubble'
  )
    add(`micro-batch ${t.microBatch * 2}`, `training.microBatch=${t.microBatch * 2}`);
  if (t.kernels === 'eager' && s.model.arch === 'llama')
    add('fused element-wise kernels (torch.compile)', 'training.kernels=fused');
  // On Hopper, FlashAttention-2 reaches about half the peak share FlashAttention-3 does (attentionKernels.ts).
  // Not for a GPU of the scenario's own that only borrows a Hopper preset's attention figures: FA3 is Hopper's kernel.
  const ownGpu = s.cluster.node.gpu.kernelFiguresOf !== undefined;
  if (
    t.flashAttention &&
    !ownGpu &&
    resolveAttentionKernel(t.attentionKernel, s.cluster.node.gpu) === 'fa2' &&
    s.cluster.node.gpu.attentionKernels?.fa3
  )
    add('FlashAttention-3 (Hopper)', 'training.attentionKernel=fa3');
  // A compute-bound bf16 step on a GPU with an FP8 peak: the linear GEMMs in FP8 (workload/fp8.ts), as Transformer
  // Engine runs them under Megatron-Core (not the Megatron-DeepSpeed model, not ZeRO-3); a change to the numerics.
  if (
    t.precision === 'bf16' &&
    !ownGpu &&
    r.bottleneck.bound === 'compute' &&
    (s.cluster.node.gpu.peakTflops.fp8 ?? 0) > 0 &&
    s.model.arch !== 'mlp' &&
    t.framework === 'none' &&
    p.zero !== 3
  )
    add('FP8 GEMMs (Transformer Engine, delayed scaling; changes the numerics)', 'training.precision=fp8');
  if (p.zero === 3) add('ZeRO-2 instead of ZeRO-3', 'parallel.zero=2');
  if (p.zero === 0 && !p.ddp.overlap && p.dp > 1)
    add('overlap the gradient all-reduce with backward', 'parallel.ddp.overlap=true');
  if (r.bottleneck.bound === 'latency of small collectives' && p.zero === 0)
    add(`bucket ${p.ddp.bucketMB * 4} MB`, `parallel.ddp.bucketMB=${p.ddp.bucketMB * 4}`);
  if (top && top.kind === 'tp-collective' && top.medium !== 'nvlink' && p.tp > 1 && p.pp === 1) {
    for (const zero of [2, 3])
      add(
        `no tensor parallelism, ZeRO-${zero} instead`,
        'parallel.tp=1',
        `parallel.dp=${p.dp * p.tp}`,
        `parallel.zero=${zero}`,
        'parallel.sequenceParallel=false',
      );
  }
  if (top && top.kind === 'tp-collective' && p.tp > 1 && !p.sequenceParallel && p.tpStyle === 'megatron')
    add('sequence parallelism', 'parallel.sequenceParallel=true');
  // Transformer Engine's userbuffers overlap is NVIDIA's; a GPU of the scenario's own may have no such library.
  if (
    top &&
    top.kind === 'tp-collective' &&
    !ownGpu &&
    p.sequenceParallel &&
    p.tpStyle === 'megatron' &&
    !p.tpCommOverlap
  )
    add('TP communication overlapped with GEMMs (Transformer Engine)', 'parallel.tpCommOverlap=true');
  const seen = new Set<string>();
  return out.filter((c) => !seen.has(c.sets.join(' ')) && seen.add(c.sets.join(' ')));
}

/** The bubble's share of the step from which trading pipeline stages for tensor parallelism is worth a try. */
export const BUBBLE_SHARE_TO_TRADE = 0.1;

/**
 * What fills a pipeline's bubble (Narayanan et al. SC21, §2.2): interleaving, with the fewest chunks per stage that
 * split its layers evenly (Megatron needs the layers per stage to divide by them and the micro-batches by pp), and
 * with one layer per chunk, the least bubble for the most point-to-point traffic; half the pipeline stages traded for
 * twice the tensor parallelism inside the node (only when the bubble takes at least `BUBBLE_SHARE_TO_TRADE` of the
 * step); more micro-batches from smaller ones. (A larger global batch would fill it too, but it changes the training
 * recipe and the work of a step, so a step time does not compare.)
 */
function pipelineCandidates(s: Scenario, microBatches: number, bubbleShare: number): Candidate[] {
  const p = s.parallel;
  const t = s.training;
  const out: Candidate[] = [];
  const perStage = s.model.layers / p.pp;
  if (
    p.schedule !== 'interleaved' &&
    microBatches % p.pp === 0 &&
    Number.isInteger(perStage) &&
    p.layersPerStage === undefined
  ) {
    const chunks = new Set<number>();
    const fewest = [2, 3, 4, 5, 6, 7, 8].find((v) => perStage % v === 0);
    if (fewest !== undefined) chunks.add(fewest);
    if (perStage > 1) chunks.add(perStage);
    for (const v of chunks)
      out.push({
        label: `interleaved schedule, ${v} chunks per stage`,
        sets: ['parallel.schedule=interleaved', `parallel.virtualStages=${v}`],
      });
  }
  const smaller =
    t.microBatch > 1
      ? [
          {
            label: `micro-batch ${Math.floor(t.microBatch / 2)} (more micro-batches fill the pipeline)`,
            sets: [`training.microBatch=${Math.floor(t.microBatch / 2)}`],
          },
        ]
      : [];
  if (bubbleShare < BUBBLE_SHARE_TO_TRADE) return [...out, ...smaller];
  const tp = p.tp * 2;
  // Whole TP groups inside a node, heads, KV heads and FFN that split over them (as Megatron needs), and no uneven
  // split of the layers, whose counts are per stage.
  const splits =
    s.model.arch !== 'mlp' && s.model.heads % tp === 0 && s.model.kvHeads % tp === 0 && s.model.ffnHidden % tp === 0;
  if (p.pp % 2 === 0 && s.cluster.node.gpusPerNode % tp === 0 && splits && p.layersPerStage === undefined) {
    out.push({
      label: `tp ${tp}, pp ${p.pp / 2} (half the stages, tensor parallelism inside the node)`,
      sets: [`parallel.tp=${tp}`, `parallel.pp=${p.pp / 2}`],
    });
  }
  return [...out, ...smaller];
}

/**
 * A model with experts: the routing balanced, where it is not (what an auxiliary loss or an expert bias aims for; the
 * difference is what imbalance costs), expert parallelism halved or doubled where the experts and dp × cp allow, and
 * combined 1F1B without a pipeline or over an interleaved one (given two micro-batches or more to pair), and DeepEP's
 * dispatcher in place of the all-to-all where it runs (NVIDIA GPUs with NVLink, whole experts a rank).
 */
function moeCandidates(s: Scenario, add: (label: string, ...sets: string[]) => void): void {
  const moe = s.model.moe!;
  const p = s.parallel;
  const routing = s.training.routing;
  if (routing && (routing.skew > 0 || routing.tokensPerExpert))
    add(
      'balanced routing (what an auxiliary loss or an expert bias aims for)',
      'training.routing.skew=0',
      'training.routing.tokensPerExpert=null',
    );
  const ep = p.ep ?? 1;
  const reducing = p.dp * (p.cp ?? 1);
  if (ep % 2 === 0 && s.noise.computeJitter === 0) add(`expert parallel ${ep / 2}`, `parallel.ep=${ep / 2}`);
  if (moe.experts % (2 * ep) === 0 && reducing % (2 * ep) === 0 && s.fidelity === 'symmetric')
    add(`expert parallel ${2 * ep}`, `parallel.ep=${2 * ep}`);
  // Megatron runs it over a pipeline with the interleaved schedule only (dispatcherChecks.ts): not offered on 1F1B.
  const pairsRun = p.pp === 1 || p.schedule === 'interleaved';
  if (ep > 1 && pairsRun && !p.moeOverlap && s.training.globalBatch / (s.training.microBatch * p.dp) > 1)
    add("combined 1F1B (each forward's all-to-alls beside another micro-batch's backward)", 'parallel.moeOverlap=true');
  if (p.dispatcher !== 'deepep' && deepEpRuns(ep, p.etp ?? p.tp, s.cluster.node))
    add(
      'DeepEP dispatcher (each token sent once to each node and GPU its experts are on)',
      'parallel.dispatcher=deepep',
    );
}
