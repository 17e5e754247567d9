import type { Fp8Setup } from '../sim/workload/fp8.js';
import type { GpuSpec } from '../sim/hardware/types.js';
import { ARCHITECTURE_TRAITS, architectureOf } from '../sim/hardware/architectures.js';
import type { ModelSpec } from '../sim/workload/model.js';
import type { Problem } from './errors.js';
import type { ScenarioInput } from './schema.js';

type TrainingInput = ScenarioInput['training'];
type ParallelInput = ScenarioInput['parallel'];

/** Why these training and parallel settings cannot run FP8 as modelled on `gpu` (workload/fp8.ts), or none. */
export function fp8Problems(t: TrainingInput, par: ParallelInput, model: ModelSpec, gpu: GpuSpec): Problem[] {
  if (t.precision !== 'fp8') {
    return t.fp8 === undefined
      ? []
      : [
          {
            path: 'training.fp8',
            message:
              `says how FP8 runs, but training.precision is ${t.precision}; ` +
              'set training.precision: fp8 or leave fp8 out',
          },
        ];
  }
  const problems: Problem[] = [];
  const recipe = t.fp8?.recipe ?? 'delayed';
  const arch = architectureOf(gpu);
  if (recipe === 'mxfp8' && arch !== 'blackwell')
    problems.push({
      path: 'training.fp8.recipe',
      message:
        "mxfp8 (MXFP8BlockScaling) runs on Blackwell only (compute capability 10.x, Transformer Engine's support " +
        `matrix), and ${gpu.name} is ${ARCHITECTURE_TRAITS[arch].label}; use delayed or tensorwise`,
    });
  if (recipe === 'mxfp8' && t.fp8?.paramGather)
    problems.push({
      path: 'training.fp8.paramGather',
      message:
        'gathering MXFP8 weights (both quantized copies and their scales) is not modelled; leave paramGather off',
    });
  if (recipe === 'blockwise')
    problems.push({
      path: 'training.fp8.recipe',
      message:
        'blockwise (Float8BlockScaling: 1×128 and 128×128 scales) is not modelled; ' +
        "use delayed (Megatron's default) or tensorwise",
    });
  if (t.framework === 'megatron-deepspeed')
    problems.push({
      path: 'training.precision',
      message:
        'fp8 is modelled as Megatron-Core runs it with Transformer Engine; ' +
        'the Megatron-DeepSpeed framework model has no FP8 path; use training.framework none',
    });
  if (model.arch === 'mlp')
    problems.push({
      path: 'training.precision',
      message:
        "fp8 is modelled for transformer layers (Transformer Engine's linear layers); " +
        'an mlp model trains in bf16 or fp16',
    });
  if (par.zero === 3)
    problems.push({
      path: 'parallel.zero',
      message:
        'fp8 with ZeRO-3 / FSDP (FP8 weights gathered a block at a time) is not modelled; ' +
        'use zero 0-2, or train in bf16',
    });
  const stage1 = par.zeroConfig.stage1 ?? (t.framework === 'megatron-deepspeed' ? 'deepspeed' : 'megatron');
  if (t.fp8?.paramGather && (par.zero !== 1 || stage1 !== 'megatron'))
    problems.push({
      path: 'training.fp8.paramGather',
      message:
        "gathers FP8 weights through Megatron's distributed optimizer, which needs parallel.zero 1 with " +
        `zeroConfig.stage1 megatron (not zero ${par.zero}${par.zero === 1 ? `, stage1 ${stage1}` : ''}); ` +
        'leave paramGather off',
    });
  return problems;
}

/** The FP8 setup of a checked scenario: defaults filled in with precision fp8, none otherwise. */
export function fp8SetupOf(t: TrainingInput): Fp8Setup | undefined {
  if (t.precision !== 'fp8') return undefined;
  const recipe = t.fp8?.recipe ?? 'delayed';
  if (recipe === 'blockwise') throw new Error(`fp8 recipe ${recipe} passed the checks`);
  return { recipe, paramGather: t.fp8?.paramGather ?? false };
}
