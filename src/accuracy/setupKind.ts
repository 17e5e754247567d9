import type { StepSetup } from '../sim/setup.js';
import type { GpuArchitecture } from '../sim/hardware/architectures.js';

/**
 * What kind of prediction a step setup asks for, in the terms the validation residuals are grouped by: the GPU
 * generation, the parallel style, one node or several, and whether a framework's host cost is modelled. A
 * validated row and a user's scenario are classified by this one function, so "comparable" means the same thing
 * on both sides (errorBand.ts).
 */
export interface SetupKind {
  gpu: GpuGeneration;
  style: ParallelStyle;
  scale: 'one-node' | 'multi-node';
  host: 'framework-host' | 'kernels-only';
  /**
   * FP8 training (present, true, only then): its GEMMs and casts are modelled apart from 16-bit training's, so a band
   * rests on runs of the same numerics only (errorBand.ts).
   */
  fp8?: true;
  /**
   * A model with experts (present, true, only then): no dense run says how well its all-to-alls and experts are
   * modelled.
   */
  moe?: true;
}

export type GpuGeneration = 'volta' | 'ampere' | 'hopper' | 'other';

/**
 * - `sharded-data`: ZeRO-3 / FSDP (weights gathered per layer), whatever else is split;
 * - `pipeline`: a pipeline (pp > 1);
 * - `tensor`: tensor or context parallelism inside each replica, no pipeline;
 * - `data`: every GPU holds the whole model (DDP, ZeRO-1/2).
 */
export type ParallelStyle = 'sharded-data' | 'pipeline' | 'tensor' | 'data';

export const PARALLEL_STYLES: readonly ParallelStyle[] = ['sharded-data', 'pipeline', 'tensor', 'data'];

/** The generation of a GPU by its CUDA compute capability (7.x Volta, 8.x Ampere and Ada, 9.x Hopper). */
export function gpuGeneration(computeCapability: number | undefined): GpuGeneration {
  if (computeCapability === undefined) return 'other';
  const major = Math.floor(computeCapability);
  if (major === 7) return 'volta';
  if (major === 8) return 'ampere';
  if (major === 9) return 'hopper';
  return 'other';
}

/**
 * The generation a GPU's predictions are banded with: its architecture where it names one (those without validation
 * rows, Ada, Blackwell and AMD's, are `other`), else its compute capability.
 */
export function gpuGenerationOf(gpu: { architecture?: GpuArchitecture; computeCapability?: number }): GpuGeneration {
  if (gpu.architecture === undefined) return gpuGeneration(gpu.computeCapability);
  const a = gpu.architecture;
  return a === 'volta' || a === 'ampere' || a === 'hopper' ? a : 'other';
}

/** The parts of a kind a band matches on, level by level (errorBand.ts); `fp8` separates the rows before them. */
export type KindPart = Exclude<keyof SetupKind, 'fp8' | 'moe'>;

export const KIND_VALUES: Record<KindPart, readonly string[]> = {
  gpu: ['volta', 'ampere', 'hopper', 'other'],
  style: PARALLEL_STYLES,
  scale: ['one-node', 'multi-node'],
  host: ['framework-host', 'kernels-only'],
};

/** What is wrong with a kind read from a file (a merged part), in words; undefined when it is one. */
export function setupKindProblem(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return `is ${JSON.stringify(v)}; expected an object { gpu, style, scale, host }`;
  const o = v as Record<string, unknown>;
  for (const [part, allowed] of Object.entries(KIND_VALUES)) {
    if (typeof o[part] !== 'string' || !allowed.includes(o[part] as string))
      return `has ${part} ${JSON.stringify(o[part]) ?? 'missing'}; expected ${allowed.join(' | ')}`;
  }
  for (const flag of ['fp8', 'moe'])
    if (o[flag] !== undefined && o[flag] !== true)
      return `has ${flag} ${JSON.stringify(o[flag])}; expected true or nothing`;
  const extra = Object.keys(o).filter((k) => !Object.hasOwn(KIND_VALUES, k) && k !== 'fp8' && k !== 'moe');
  return extra.length > 0 ? `has unknown field(s) ${extra.join(', ')}` : undefined;
}

export function parallelStyle(p: Pick<StepSetup['parallel'], 'tp' | 'pp' | 'cp' | 'zero'>): ParallelStyle {
  if (p.zero === 3) return 'sharded-data';
  if (p.pp > 1) return 'pipeline';
  if (p.tp > 1 || (p.cp ?? 1) > 1) return 'tensor';
  return 'data';
}

export function setupKind(
  setup: Pick<StepSetup, 'cluster' | 'parallel' | 'framework' | 'training'> & {
    model?: Pick<StepSetup['model'], 'moe'>;
  },
): SetupKind {
  return {
    gpu: gpuGenerationOf(setup.cluster.node.gpu),
    style: parallelStyle(setup.parallel),
    scale: setup.cluster.nodes > 1 ? 'multi-node' : 'one-node',
    host: setup.framework ? 'framework-host' : 'kernels-only',
    ...(setup.training.precision === 'fp8' ? { fp8: true as const } : {}),
    ...(setup.model?.moe ? { moe: true as const } : {}),
  };
}

const GPU_WORDS: Record<GpuGeneration, string> = {
  volta: 'Volta',
  ampere: 'Ampere (A100)',
  hopper: 'Hopper (H100/H200)',
  other: 'other GPUs',
};
const STYLE_WORDS: Record<ParallelStyle, string> = {
  'sharded-data': 'ZeRO-3/FSDP',
  pipeline: 'pipeline-parallel',
  tensor: 'tensor/context-parallel',
  data: 'data-parallel',
};

/** The words for each part of a kind, as the outputs name them. */
export const kindWords = {
  gpu: (g: GpuGeneration) => GPU_WORDS[g],
  style: (s: ParallelStyle) => STYLE_WORDS[s],
  scale: (s: SetupKind['scale']) => (s === 'one-node' ? 'one node' : 'several nodes'),
  host: (h: SetupKind['host']) => (h === 'framework-host' ? 'with a framework host model' : 'kernels only'),
};
