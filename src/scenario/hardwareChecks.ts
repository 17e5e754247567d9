import type { GpuSpec } from '../sim/hardware/types.js';
import type { ModelSpec } from '../sim/workload/model.js';

/**
 * Why `nics` NICs cannot serve `gpus` GPUs per node, or undefined. NCCL gives every NIC the same share of channels; a
 * count that splits the GPUs unevenly leaves some NICs with more rings than others, which the simulated network then
 * charges as a slower fabric than the one with fewer NICs.
 */
export function nicCountProblem(gpus: number, nics: number): string | undefined {
  if (gpus % nics === 0 || nics % gpus === 0) return undefined;
  const fit = [...Array(gpus).keys()].map((k) => k + 1).filter((k) => gpus % k === 0);
  return `${nics} NICs for ${gpus} GPUs: give a count that divides the GPUs per node or is a multiple of it (${fit.join(', ')}, ${2 * gpus}, ...); count the NICs NCCL uses (compute fabric), not storage or management ones`;
}

/**
 * Why a GPU cannot train at `precision`, or undefined: it has no dense peak for it. The kernel timing makes the same
 * check; here it makes memory and scale refuse what simulate refuses.
 */
export function precisionProblem(gpu: GpuSpec, precision: 'bf16' | 'fp16' | 'tf32' | 'fp32'): string | undefined {
  const peaks = gpu.peakTflops;
  if ((peaks[precision] ?? 0) > 0) return undefined;
  const runs = (['bf16', 'fp16', 'tf32', 'fp32'] as const).filter((p) => (peaks[p] ?? 0) > 0);
  return `${gpu.name} has no dense ${precision} peak (its spec gives ${runs.join(', ') || 'none'})${runs.length > 0 ? `; use one it runs, for example --set training.precision=${runs[0]}` : ''}`;
}

/**
 * A sequence past a model's learned positions (GPT, BERT: a table of `model.seqLen` rows), or undefined. Rotary
 * positions (Llama) extend, as long-context runs do.
 */
export function learnedPositionsWarning(model: ModelSpec, seqLen: number): string | undefined {
  if (!(model.arch === 'gpt' || model.arch === 'bert') || seqLen <= model.seqLen) return undefined;
  return `training.seqLen ${seqLen} is longer than the ${model.seqLen} learned positions of ${model.name}, which has none past them; simulated all the same (set model.seqLen: ${seqLen} for a model with that many)`;
}
