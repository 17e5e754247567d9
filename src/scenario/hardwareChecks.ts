import type { Dtype, GpuSpec } from '../sim/hardware/types.js';
import { attentionKernelProblem, flashRunsOn, type AttentionKernelChoice } from '../sim/workload/attentionKernels.js';
import { precisionProblem } from '../sim/workload/kernelTime.js';
import type { ModelSpec } from '../sim/workload/model.js';
import type { Problem } from './errors.js';

/**
 * Why `nics` NICs cannot serve `gpus` GPUs per node, or undefined. NCCL gives every NIC the same share of channels; a
 * count that splits the GPUs unevenly leaves some NICs with more rings than others, which the simulated network then
 * charges as a slower fabric than the one with fewer NICs.
 */
export function nicCountProblem(gpus: number, nics: number): string | undefined {
  if (gpus % nics === 0 || nics % gpus === 0) return undefined;
  const fit = [...Array(gpus).keys()].map((k) => k + 1).filter((k) => gpus % k === 0);
  return (
    `${nics} NICs for ${gpus} GPUs: give a count that divides the GPUs per node or is a multiple of it ` +
    `(${fit.join(', ')}, ${2 * gpus}, ...); count the NICs NCCL uses (compute fabric), not storage or management ones`
  );
}

/**
 * What the GPU cannot run of what the training section asks: its precision (no dense peak: the kernel timing would
 * refuse it too, so that memory and scale refuse what simulate refuses), its attention kernel, and context parallelism
 * (`cp`), whose attention is Transformer Engine's fused kernels, which need Ampere or newer.
 */
export function gpuTrainingProblems(
  gpu: GpuSpec,
  t: { precision: Dtype; attentionKernel: AttentionKernelChoice; flashAttention: boolean },
  cp = 1,
): Problem[] {
  const problems: Problem[] = [];
  const noPeak = precisionProblem(gpu, t.precision, 'its spec');
  if (noPeak) problems.push({ path: 'training.precision', message: noPeak });
  const kernelProblem = attentionKernelProblem(gpu, t.attentionKernel);
  if (kernelProblem) problems.push({ path: 'training.attentionKernel', message: kernelProblem });
  if (t.attentionKernel !== 'auto' && !t.flashAttention) {
    problems.push({
      path: 'training.attentionKernel',
      message:
        `${t.attentionKernel} is a fused attention kernel, but training.flashAttention is false (unfused attention); ` +
        'set flashAttention: true or leave attentionKernel out',
    });
  }
  if (cp > 1 && t.flashAttention && !flashRunsOn(gpu)) {
    problems.push({
      path: 'parallel.cp',
      message:
        "context parallelism runs on Transformer Engine's fused attention, which needs compute capability 8.0 or " +
        `more (Ampere or newer); ${gpu.name} has ${gpu.computeCapability!.toFixed(1)}: use cp 1`,
    });
  }
  return problems;
}

/**
 * A sequence past a model's learned positions (GPT, BERT: a table of `model.seqLen` rows), or undefined. Rotary
 * positions (Llama) extend, as long-context runs do.
 */
export function learnedPositionsWarning(model: ModelSpec, seqLen: number): string | undefined {
  if (!(model.arch === 'gpt' || model.arch === 'bert') || seqLen <= model.seqLen) return undefined;
  return (
    `training.seqLen ${seqLen} is longer than the ${model.seqLen} learned positions of ${model.name}, ` +
    `which has none past them; simulated all the same (set model.seqLen: ${seqLen} for a model with that many)`
  );
}
