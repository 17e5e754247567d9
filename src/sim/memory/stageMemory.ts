import { fp8WeightCacheBytesPerElement } from '../workload/fp8.js';
import { stageLayers, stepContext, type StepContext } from '../parallel/stepContext.js';
import { stageParameters, type StageParameters } from '../parallel/stageParameters.js';
import { peakInFlight, peakLayersInFlight, type PipeOp } from '../parallel/schedules.js';
import { stageOps, stageUnits, unitOrder } from '../parallel/combinedSchedule.js';
import { cpBufferBytes } from '../parallel/contextParallel.js';
import { reductionBuckets, reductionBuffers } from '../parallel/buckets.js';
import type { StepSetup } from '../setup.js';
import { activationBytesPerLayer, activationBytesPerRank, embeddingActivationBytes } from './activations.js';
import { optimizerStateBytesPerParam } from './optimizerState.js';
import { memoryPerGpu, offloadHostBytes, type MemoryBreakdown } from './memory.js';

/** Memory of one rank of one pipeline stage, with what sets it. */
export interface StageMemory extends MemoryBreakdown {
  stage: number;
  /** Transformer layers this stage holds (all its chunks). */
  layers: number;
  /** Parameters one rank of the stage holds after TP, before ZeRO. */
  paramsPerRank: number;
  /** Parameters each GPU of the stage keeps between steps: `paramsPerRank`, over dp × cp under ZeRO-3. */
  paramsHeldPerGpu: number;
  /** Most (micro-batch, chunk) forward passes whose activations are alive at once. */
  passesInFlight: number;
  fits: boolean;
  /** GPU memory missing when the stage does not fit (0 when it fits). */
  shortfallBytes: number;
  /** Host memory this rank's optimizer offload holds (0 without offload; `offloadHostBytes`). */
  hostBytes: number;
}

/**
 * Memory per pipeline stage without running the step: weights, gradients and optimizer state of the stage's
 * parameters (ZeRO-sharded over dp × cp, the ranks that reduce the same gradients), activations of the passes its
 * schedule keeps alive (Korthikanti et al. 2022 per layer; 1F1B stage s holds p − s micro-batches, GPipe all of them,
 * interleaving more), buckets and the runtime reserve.
 */
export function stageMemories(setup: StepSetup): StageMemory[] {
  const ctx = stepContext(setup);
  // Combined 1F1B starts a step's forward before its backward frees anything (combinedSchedule.ts).
  const combined = setup.parallel.moeOverlap ? stageUnits(ctx) : undefined;
  return Array.from({ length: ctx.pp }, (_, s) =>
    stageMemory(ctx, s, combined ? unitOrder(combined[s]) : stageOps(ctx, s)),
  );
}

/** Stage s's memory, its passes running in the order `schedule` gives. */
function stageMemory(ctx: StepContext, s: number, schedule: PipeOp[]): StageMemory {
  const { setup } = ctx;
  const { model, parallel: par } = setup;
  const { mixed, elementBytes } = ctx.precision;
  const params = stageParameters(ctx, s);
  const paramsPerRank = params.elementsPerRank;
  const passes = peakInFlight(schedule);
  const state = { ...optimizerStateOf(ctx, paramsPerRank), ...expertSharding(ctx, params) };
  const mem = withFp8WeightCache(
    ctx,
    params.fp8WeightElementsPerRank,
    memoryPerGpu({
      ...state,
      model,
      activationBytes: stageActivationBytes(ctx, s, schedule),
      // The buckets the reduction packs (DeepSpeed's reduce_bucket_size from ZeRO-2 on and for its ZeRO-1).
      bucketBytes: reductionBuckets(par).bucketBytes,
      bucketsInFlight: reductionBuffers(par),
      ...(mixed && par.fp32Reduction && !par.fp32Gradients ? { reductionCopyPerBucketByte: 2 } : {}),
      attentionBufferBytes: cpBufferBytes({
        model,
        cp: ctx.cp,
        tp: ctx.tp,
        tokens: ctx.tokensPerRank,
        elementBytes,
        commType: par.cpCommType,
      }),
      tp: par.tp,
      ...(par.zero === 3 ? { zero3: par.zeroConfig.stage3 ?? 'fsdp' } : {}),
      ...(mixed && par.fp32Gradients ? { gradientBytesPerParam: 4 } : {}),
      // PyTorch DDP's default gradient_as_bucket_view=False keeps a second, flat copy of the gradients.
      ddpBucketCopy: par.tp === 1 && par.pp === 1 && par.zero === 0,
    }),
  );
  const capacity = setup.cluster.node.gpu.memoryBytes;
  return {
    ...mem,
    stage: s,
    layers: stageLayers(ctx, s).size,
    paramsPerRank,
    paramsHeldPerGpu: par.zero === 3 ? paramsPerRank / state.dp : paramsPerRank,
    passesInFlight: passes,
    fits: mem.totalBytes <= capacity,
    shortfallBytes: Math.max(0, mem.totalBytes - capacity),
    hostBytes: offloadHostBytes({ ...state, microBatches: ctx.microBatches }),
  };
}

/**
 * The routed experts' states are sharded over their own expert-data-parallel ranks: counted in shares of the dense
 * reducing ranks (memory.ts `shardedParamsPerRank`). Nothing without experts.
 */
function expertSharding(ctx: StepContext, params: StageParameters): { shardedParamsPerRank?: number } {
  const expert = params.expertElementsPerRank;
  if (expert === 0) return {};
  return { shardedParamsPerRank: params.elementsPerRank + expert * (ctx.reducingRanks / ctx.expertReducingRanks - 1) };
}

/** The account with FP8 training's cached FP8 weight copies added to the weights (workload/fp8.ts). */
function withFp8WeightCache(ctx: StepContext, fp8WeightElements: number, mem: MemoryBreakdown): MemoryBreakdown {
  const fp8 = ctx.setup.training.fp8;
  if (!fp8 || fp8WeightElements === 0) return mem;
  const cacheBytes = fp8WeightElements * fp8WeightCacheBytesPerElement(fp8.paramGather, fp8.recipe);
  return { ...mem, weightsBytes: mem.weightsBytes + cacheBytes, totalBytes: mem.totalBytes + cacheBytes };
}

/** What sets a rank's weights, gradients and optimizer state: its parameters, their sharding and their types. */
function optimizerStateOf(ctx: StepContext, paramsPerRank: number) {
  const { training: t, parallel: par } = ctx.setup;
  const precision = ctx.precision.mixed ? ('mixed' as const) : ('fp32' as const);
  return {
    paramsPerRank,
    dp: ctx.reducingRanks,
    zero: par.zero,
    precision,
    optimizer: t.optimizer,
    offloadOptimizer: par.offload === 'cpu',
    optimizerBytesPerParam: optimizerStateBytesPerParam(precision, t.optimizer, t.optimizerState),
  };
}

/** The activations stage s keeps at its peak: those of the passes in flight, and the first and last stage's extras. */
function stageActivationBytes(ctx: StepContext, s: number, schedule: PipeOp[]): number {
  const { model, training: t, parallel: par } = ctx.setup;
  const chunks = ctx.virtualStageLayers;
  const mlp = model.arch === 'mlp';
  const first = s === 0;
  const passes = peakInFlight(schedule);
  // Layers per pass in flight (the mean over the passes alive at the peak of layers): whether the stage has layers
  // whose recompute needs a working set; the bytes in flight are counted pass by pass below.
  const layersPerPass = peakLayersInFlight(schedule, (c) => chunks[c * ctx.pp + s].length) / passes;
  // A context-parallel rank keeps the activations of its 1/cp of each sequence (the ring needs fused attention,
  // so no term grows with s²).
  const shape = {
    microBatch: t.microBatch,
    seqLen: t.seqLen / ctx.cp,
    tp: par.tp,
    sequenceParallel: par.sequenceParallel,
    recompute: par.recompute,
    flashAttention: t.flashAttention,
    bytesPerElement: ctx.precision.elementBytes,
    eager: t.kernels === 'eager',
    ...(ctx.expertLoads ? { expertLoadFactors: ctx.expertLoads.map((l) => l?.busiestFactor) } : {}),
    ...(ctx.etp !== ctx.tp ? { etp: ctx.etp } : {}),
  };
  // Each pass in flight keeps its own chunk's layers (an MLP's differ in size); the embedding's only a pass through
  // the first chunk of the first stage (virtual stage 0), not the interleaved schedule's later chunks.
  const perLayer = activationBytesPerLayer(model, shape);
  const embedding = first ? embeddingActivationBytes(model, shape) : 0;
  const chunkBytes = (c: number) => {
    const layers = chunks[c * ctx.pp + s];
    const eachLayer = () => layers.reduce((a, l) => a + activationBytesPerLayer(model, { ...shape, layerIndex: l }), 0);
    if (mlp) return eachLayer();
    // Layers with experts keep more than the dense layers before them (DeepSeek's first k).
    return (model.moe ? eachLayer() : layers.length * perLayer) + (c === 0 ? embedding : 0);
  };
  const inFlightBytes = peakLayersInFlight(schedule, chunkBytes);
  return activationBytesPerRank(model, shape, {
    layers: mlp ? 0 : layersPerPass,
    microBatchesInFlight: passes,
    firstStage: first,
    lastStage: s === ctx.pp - 1,
    inFlightBytes,
  });
}
