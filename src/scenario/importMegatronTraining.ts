import { ScenarioError } from '../sim/errors.js';
import type { TrainingPrecision } from '../sim/setup.js';
import type { ImportCollector } from './importResult.js';
import type { MegatronArgs } from './importMegatronFlags.js';

/**
 * The training section of a Megatron-LM command line: batch sizes, precision and attention (importTraining), the FP8
 * flags (importFp8) and the precision-aware optimizer's state types (importOptimizerState). Used by importMegatron.ts.
 */

export function importTraining(
  c: ImportCollector,
  a: MegatronArgs,
  dp: number | undefined,
  precision: TrainingPrecision | undefined,
): void {
  const int = (f: string) => a.int(f);
  const pick = (f: string) => a.pick(f);
  const flagText = (f: string) => a.shown(f);
  const micro = int('micro-batch-size');
  const global = int('global-batch-size');
  if (micro) c.set('training.microBatch', micro, flagText('micro-batch-size'));
  if (global) c.set('training.globalBatch', global, flagText('global-batch-size'));
  else if (micro && dp)
    c.set('training.globalBatch', micro * dp, `Megatron default: --micro-batch-size ${micro} × dp ${dp}`, true);
  else if (micro)
    c.warn(
      '--micro-batch-size without --global-batch-size: Megatron uses micro × dp, but dp is not known here; ' +
        "the scenario's globalBatch is kept",
    );
  if (precision) c.set('training.precision', precision, `--${precision}`);
  else if (a.values.size > 0)
    c.warn("neither --fp16 nor --bf16: Megatron would train in fp32; the scenario's precision is kept");
  const backend = pick('attention-backend');
  if (a.has('use-flash-attn')) c.set('training.flashAttention', true, '--use-flash-attn');
  else if (backend === 'flash' || backend === 'fused')
    c.set('training.flashAttention', true, flagText('attention-backend'));
  else if (backend === 'unfused' || backend === 'local')
    c.set('training.flashAttention', false, flagText('attention-backend'));
  // Transformer Engine's FusedAttention is cuDNN's kernel; which kernel `auto` picks depends on the GPU (cuDNN on
  // Hopper).
  if (backend === 'fused')
    c.warn(
      "--attention-backend fused runs cuDNN's fused attention: " +
        "on Hopper add --set training.attentionKernel=cudnn (the scenario keeps FlashAttention-2's figures otherwise)",
    );
  const optimizer = pick('optimizer');
  if (optimizer) c.set('training.optimizer', optimizer, flagText('optimizer'));
}

/**
 * Megatron's FP8 flags: --fp8-format (hybrid or e4m3: the same GEMMs in FP8 either way) makes the precision fp8,
 * --fp8-recipe and --fp8-param-gather say how (training.fp8; workload/fp8.ts). Without --fp8-format Megatron trains
 * without FP8, and the other two do nothing.
 */
export function importFp8(c: ImportCollector, a: MegatronArgs, precision: TrainingPrecision | undefined): void {
  const format = a.pick('fp8-format');
  if (!format) {
    const stray = ['fp8-recipe', 'fp8-param-gather'].filter((f) => a.has(f)).map((f) => a.shown(f));
    if (stray.length > 0) c.warn(`${stray.join(', ')} without --fp8-format: Megatron trains without FP8; ignored`);
    return;
  }
  if (precision === 'fp16')
    c.warn(`${a.shown('fp8-format')} with --fp16: the work outside the FP8 GEMMs is simulated in bf16, not fp16`);
  c.set('training.precision', 'fp8', `${a.shown('fp8-format')}${precision ? ` with --${precision}` : ''}`);
  const recipe = a.pick('fp8-recipe');
  c.set('training.fp8.recipe', recipe ?? 'delayed', recipe ? a.shown('fp8-recipe') : 'Megatron default', !recipe);
  const gather = a.has('fp8-param-gather');
  c.set('training.fp8.paramGather', gather, gather ? '--fp8-param-gather' : 'Megatron default', !gather);
}

/**
 * The precision-aware optimizer's state types (Transformer Engine's FusedAdam): --exp-avg-dtype and --exp-avg-sq-dtype
 * for the moments, --main-params-dtype for the master copy, which with bf16 weights and an fp32 master keeps only the
 * remainders (OptimizerConfig.store_param_remainders, on by default). Megatron refuses what this refuses
 * (optimizer_config.py: any type but fp32 without the switch, the switch with SGD; optimizer/__init__.py: the switch
 * without the distributed optimizer). With --optimizer-cpu-offload the host's state is modelled in fp32.
 * @throws ScenarioError for a combination Megatron refuses
 */
export function importOptimizerState(
  c: ImportCollector,
  a: MegatronArgs,
  precision: TrainingPrecision | undefined,
): void {
  const typed = ['main-params-dtype', 'main-grads-dtype', 'exp-avg-dtype', 'exp-avg-sq-dtype'].filter(
    (f) => a.has(f) && a.pick(f) !== 'fp32',
  );
  // The strategy is built in full: a state the scenario file reduced is replaced by the one Megatron would keep.
  const allFp32 = (from: string) => {
    for (const part of ['masterWeights', 'momentum', 'variance'])
      c.set(`training.optimizerState.${part}`, 'fp32', from, true);
  };
  if (!a.has('use-precision-aware-optimizer')) {
    if (typed.length > 0)
      throw new ScenarioError(
        '',
        `--megatron-args: ${typed.map((f) => a.shown(f)).join(', ')}: Megatron refuses any type but fp32 without ` +
          '--use-precision-aware-optimizer ("can only be fp32 when not using precision-aware optimizer"); ' +
          'add the switch or drop the flag',
      );
    allFp32('Megatron default: fp32 optimizer state without --use-precision-aware-optimizer');
    return;
  }
  if ((a.pick('optimizer') ?? 'adam') !== 'adam')
    throw new ScenarioError(
      '',
      `--megatron-args: --use-precision-aware-optimizer with ${a.shown('optimizer')}: ` +
        'Megatron supports it only with adam',
    );
  if (!a.has('use-distributed-optimizer'))
    throw new ScenarioError(
      '',
      '--megatron-args: --use-precision-aware-optimizer without --use-distributed-optimizer: ' +
        'Megatron supports it only with the distributed optimizer; add --use-distributed-optimizer',
    );
  if (a.has('optimizer-cpu-offload')) {
    if (typed.some((f) => f !== 'main-grads-dtype'))
      c.warn(
        `${typed.map((f) => a.shown(f)).join(', ')}: with --optimizer-cpu-offload the optimizer state on the host is ` +
          'simulated in fp32',
      );
    allFp32('--optimizer-cpu-offload: the host optimizer state is simulated in fp32');
    return;
  }
  const main = a.pick('main-params-dtype') ?? 'fp32';
  const from = (f: string, what: string) =>
    a.has(f) ? a.shown(f) : `Megatron default with --use-precision-aware-optimizer: ${what}`;
  if (precision === 'bf16' && main === 'fp32')
    c.set(
      'training.optimizerState.masterWeights',
      'remainders',
      from(
        'main-params-dtype',
        'an fp32 master of bf16 weights kept as its 16-bit remainders (store_param_remainders)',
      ),
      true,
    );
  else if (precision === 'bf16' || precision === 'fp16')
    c.set(
      'training.optimizerState.masterWeights',
      main,
      from('main-params-dtype', 'fp32'),
      !a.has('main-params-dtype'),
    );
  else c.set('training.optimizerState.masterWeights', 'fp32', 'Megatron: no master copy in fp32 training', true);
  c.set(
    'training.optimizerState.momentum',
    a.pick('exp-avg-dtype') ?? 'fp32',
    from('exp-avg-dtype', 'fp32'),
    !a.has('exp-avg-dtype'),
  );
  c.set(
    'training.optimizerState.variance',
    a.pick('exp-avg-sq-dtype') ?? 'fp32',
    from('exp-avg-sq-dtype', 'fp32'),
    !a.has('exp-avg-sq-dtype'),
  );
}
