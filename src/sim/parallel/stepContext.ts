import type { StepSetup, TrainingPrecision } from '../setup.js';
import { pipelineLayerCount } from '../workload/model.js';
import { splitOf } from './layout.js';
import { layerLoads, type ExpertLoad } from '../workload/routing.js';

/** What a training precision means for the step: the compute dtype and the bytes of each kind of element. */
export interface PrecisionFacts extends PrecisionInfo {
  /** Bytes of a stored weight gradient: fp32 with Megatron's main_grad buffers (`parallel.fp32Gradients`). */
  gradientBytes: number;
  /** Bytes of a gradient on the wire: fp32 with DeepSpeed's communication_data_type fp32 (`parallel.fp32Reduction`). */
  wireGradientBytes: number;
}

/** The dtypes a training precision computes in, and the size of its elements. */
export interface PrecisionInfo {
  /** What the step computes in: the GEMMs, attention and element-wise work (bf16 for FP8 training). */
  dtype: Exclude<TrainingPrecision, 'fp8'>;
  /**
   * What the GEMMs that carry most FLOPs run in, and whose dense peak MFU is quoted against: `fp8` for FP8 training
   * (the transformer layers' linear GEMMs, workload/fp8.ts), else `dtype`.
   */
  gemmDtype: TrainingPrecision;
  /** 16-bit compute with fp32 master weights (bf16, fp16, and fp8, which is bf16 with FP8 GEMMs). */
  mixed: boolean;
  /** Bytes of an activation, an activation gradient and a working weight copy (2 in mixed precision, else 4). */
  elementBytes: number;
}

/** Compute dtypes and bytes per activation element for a training precision. */
export function precisionInfo(precision: TrainingPrecision): PrecisionInfo {
  const fp8 = precision === 'fp8';
  const mixed = fp8 || precision === 'bf16' || precision === 'fp16';
  return { dtype: fp8 ? 'bf16' : precision, gemmDtype: precision, mixed, elementBytes: mixed ? 2 : 4 };
}

/** The precision facts of a step: `precisionInfo` and the gradient's stored and wire sizes. */
export function precisionFacts(setup: StepSetup): PrecisionFacts {
  const base = precisionInfo(setup.training.precision);
  const gradientBytes = base.mixed && !setup.parallel.fp32Gradients ? 2 : 4;
  const wireGradientBytes = base.mixed && setup.parallel.fp32Reduction ? 4 : gradientBytes;
  return { ...base, gradientBytes, wireGradientBytes };
}

/**
 * The facts of one training step that the step compiler and the memory account both derive from a setup, computed
 * once and with every optional field defaulted: sizes of each parallel axis, micro-batches, tokens, precision and the
 * split of the layers over the pipeline.
 */
export interface StepContext {
  setup: StepSetup;
  tp: number;
  pp: number;
  /** Context-parallel size (1 without context parallelism). */
  cp: number;
  /** Data-parallel replicas (`parallel.dp`). */
  replicas: number;
  /** Ranks of a stage that hold the same weights and reduce the same gradients: replicas × cp. */
  reducingRanks: number;
  /** Expert-parallel size (1 without experts). */
  ep: number;
  /** Expert tensor-parallel size (tp unless the scenario gives its own). */
  etp: number;
  /** Ranks that reduce an expert tensor's gradients together: tp × dp × cp / (etp × ep). */
  expertReducingRanks: number;
  /** Each layer's routing load (undefined for dense layers), or undefined when routing is balanced (routing.ts). */
  expertLoads?: (ExpertLoad | undefined)[];
  /** Model chunks per pipeline stage (`parallel.virtualStages`). */
  chunksPerStage: number;
  /** Micro-batches each replica runs per step: globalBatch / (microBatch × dp). */
  microBatches: number;
  /** Tokens of one micro-batch on one context-parallel rank: microBatch × seqLen / cp. */
  tokensPerRank: number;
  precision: PrecisionFacts;
  /** Transformer layers of each virtual stage (pp × chunksPerStage lists; chunk c of stage s is c·pp + s). */
  virtualStageLayers: number[][];
}

export function stepContext(setup: StepSetup): StepContext {
  const { training, parallel: par, model } = setup;
  const cp = par.cp ?? 1;
  return {
    setup,
    tp: par.tp,
    pp: par.pp,
    cp,
    replicas: par.dp,
    reducingRanks: par.dp * cp,
    ep: par.ep ?? 1,
    etp: par.etp ?? par.tp,
    expertReducingRanks: (par.tp * par.dp * cp) / ((par.etp ?? par.tp) * (par.ep ?? 1)),
    expertLoads: layerLoads(model, par.ep ?? 1, training.routing, setup.seed),
    chunksPerStage: par.virtualStages,
    microBatches: training.globalBatch / (training.microBatch * par.dp),
    tokensPerRank: (training.microBatch * training.seqLen) / cp,
    precision: precisionFacts(setup),
    virtualStageLayers: splitOf(pipelineLayerCount(model), par),
  };
}

/** The layers stage `stage` holds, over all its chunks. */
export function stageLayers(ctx: StepContext, stage: number): Set<number> {
  const layers = new Set<number>();
  for (let c = 0; c < ctx.chunksPerStage; c++)
    for (const l of ctx.virtualStageLayers[c * ctx.pp + stage]) layers.add(l);
  return layers;
}
