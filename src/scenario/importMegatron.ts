import { ScenarioError } from '../sim/errors.js';
import { MiB } from '../sim/engine/units.js';
import type { TrainingPrecision } from '../sim/setup.js';
import type { CpCommType } from '../sim/workload/ops.js';
import { ImportCollector, type ImportResult } from './importResult.js';
import { MegatronArgs, NOT_MODELLED, SOURCE, unknownFlagShown } from './importMegatronFlags.js';
import { importPipelineSplit, importVirtualStages } from './importMegatronSchedule.js';
import { importFp8, importOptimizerState, importTraining } from './importMegatronTraining.js';
import { importModel } from './importMegatronModel.js';
import { importMoe } from './importMegatronMoe.js';

/**
 * Reading the command-line arguments of a Megatron-LM run (`pretrain_gpt.py …`) into scenario
 * overrides. Flag names, defaults and derived values follow `megatron/training/arguments.py`
 * (`_add_network_size_args`, `_add_training_args`, `_add_distributed_args`, `validate_args`) and
 * `megatron/core/distributed/distributed_data_parallel_config.py`.
 *
 * The parallel strategy is built in full (a Megatron run that does not say `--sequence-parallel`
 * runs without it, so the scenario's own value would be wrong); model and training fields are set
 * only where the arguments give them.
 */

/** What the importer knows about the scenario it will be applied to (all optional). */
export interface MegatronContext {
  /** GPUs in the scenario's cluster: gives the data-parallel size Megatron would derive. */
  gpus?: number;
  /** The scenario model's layer count, for `--num-layers-per-virtual-pipeline-stage` without `--num-layers`. */
  layers?: number;
  /** The scenario's precision, used when the arguments give neither `--fp16` nor `--bf16`. */
  precision?: TrainingPrecision;
}

/**
 * Builds scenario overrides from a Megatron-LM argument list as pasted from a launch script
 * (`--flag value` or `--flag=value`, quotes, backslash-newline continuations, `#` comments, and
 * an optional launcher prefix such as `torchrun … pretrain_gpt.py`).
 * @throws ScenarioError naming the flag: a missing value, a non-numeric size, an unknown choice,
 *   `--fp16` with `--bf16`, or virtual-pipeline sizes that do not divide the layers
 */
export function importMegatronArgs(text: string, context: MegatronContext = {}): ImportResult {
  const a = new MegatronArgs(text);
  const c = new ImportCollector();
  const has = (f: string) => a.has(f);
  const int = (f: string) => a.int(f);
  const flagText = (f: string) => a.shown(f);

  if (has('fp16') && has('bf16'))
    throw new ScenarioError('', `${SOURCE}: --fp16 and --bf16 were both given; Megatron accepts one of them`);
  const precision: TrainingPrecision | undefined = has('bf16') ? 'bf16' : has('fp16') ? 'fp16' : undefined;

  // Parallel sizes. Megatron derives the data-parallel size from the world size: world / (tp × cp × pp).
  const tp = int('tensor-model-parallel-size');
  const pp = int('pipeline-model-parallel-size');
  const cp = int('context-parallel-size');
  const dpGiven = int('data-parallel-size');
  const tpv = tp ?? 1;
  const ppv = pp ?? 1;
  const cpv = cp ?? 1;
  c.set('parallel.tp', tpv, tp ? flagText('tensor-model-parallel-size') : 'Megatron default', !tp);
  c.set('parallel.pp', ppv, pp ? flagText('pipeline-model-parallel-size') : 'Megatron default', !pp);
  c.set('parallel.cp', cpv, cp ? flagText('context-parallel-size') : 'Megatron default', !cp);
  importCpCommType(c, a, cpv);
  if (dpGiven) c.set('parallel.dp', dpGiven, flagText('data-parallel-size'));
  else c.set('parallel.dp', undefined, `Megatron derives it: GPUs / (tp × ${cpv > 1 ? 'cp × ' : ''}pp)`, true);
  const gpus = context.gpus;
  const split = tpv * cpv * ppv;
  const dp = dpGiven ?? (gpus && gpus % split === 0 ? gpus / split : undefined);

  const layers = int('num-layers');
  importVirtualStages(c, a, ppv, layers ?? context.layers);
  importPipelineSplit(c, a, ppv, layers ?? context.layers);
  // Megatron turns sequence parallelism off at tp 1 (with a warning), and TP overlap needs it.
  const sp = has('sequence-parallel') && tpv > 1;
  if (has('sequence-parallel') && !sp)
    c.warn(
      '--sequence-parallel: turned off, as Megatron does, ' +
        'because tensor parallelism is off (--tensor-model-parallel-size 1)',
    );
  c.set(
    'parallel.sequenceParallel',
    sp,
    sp
      ? '--sequence-parallel'
      : has('sequence-parallel')
        ? '--sequence-parallel, turned off at tp 1'
        : 'Megatron default',
    !has('sequence-parallel'),
  );
  const overlapTp = has('tp-comm-overlap') && sp;
  // validate_args asserts it ("Tensor parallel communication/GEMM overlap can happen only when sequence parallelism is
  // enabled"), after turning sequence parallelism off at tp 1.
  if (has('tp-comm-overlap') && !sp)
    throw new ScenarioError(
      '',
      `${SOURCE}: --tp-comm-overlap without sequence ` +
        `parallelism${has('sequence-parallel') ? ' (Megatron turns --sequence-parallel off at tp 1)' : ''}: ` +
        "Megatron refuses it (the overlap works on sequence parallelism's all-gathers and reduce-scatters); " +
        'add --sequence-parallel with tp > 1, or drop --tp-comm-overlap',
    );
  c.set('parallel.tpCommOverlap', overlapTp, overlapTp ? '--tp-comm-overlap' : 'Megatron default', !overlapTp);
  c.set('parallel.tpStyle', 'megatron', 'Megatron', true);
  c.set('parallel.placement', 'tp-dp-pp', 'Megatron rank order', true);
  importRecompute(c, a, layers ?? context.layers, ppv);

  // Megatron's distributed optimizer shards the optimizer state over DP ranks: ZeRO-1 (DESIGN §7).
  const distOpt = has('use-distributed-optimizer');
  c.set('parallel.zero', distOpt ? 1 : 0, distOpt ? '--use-distributed-optimizer' : 'Megatron default', !distOpt);
  const offload = has('optimizer-cpu-offload');
  c.set(
    'parallel.offload',
    offload ? 'cpu' : 'none',
    offload ? '--optimizer-cpu-offload' : 'Megatron default',
    !offload,
  );
  const overlap = has('overlap-grad-reduce');
  const overlapFrom = overlap ? '--overlap-grad-reduce' : 'Megatron default';
  c.set('parallel.ddp.overlap', overlap, overlapFrom, !overlap);
  // The step compiler reads ZeRO-1's overlap from zeroConfig.overlapComm; Megatron's ZeRO-1 reduces in its DDP buckets.
  if (distOpt) {
    c.set('parallel.zeroConfig.overlapComm', overlap, overlapFrom, !overlap);
    c.set(
      'parallel.zeroConfig.stage1',
      'megatron',
      "--use-distributed-optimizer: Megatron's distributed optimizer (DDP buckets)",
    );
  }
  // Megatron asserts --overlap-param-gather only with the distributed optimizer (arguments.py).
  const overlapGather = has('overlap-param-gather');
  if (overlapGather && !distOpt)
    throw new ScenarioError(
      '',
      '--megatron-args: --overlap-param-gather without --use-distributed-optimizer: ' +
        'Megatron supports it only with the distributed optimizer; add --use-distributed-optimizer',
    );
  if (overlapGather && !overlap)
    throw new ScenarioError(
      '',
      '--megatron-args: --overlap-param-gather without --overlap-grad-reduce: Megatron requires both ' +
        '("Must use --overlap-param-gather with --overlap-grad-reduce"); add --overlap-grad-reduce',
    );
  c.set(
    'parallel.overlapParamGather',
    overlapGather,
    overlapGather ? '--overlap-param-gather' : 'Megatron default',
    !overlapGather,
  );
  // Megatron keeps 16-bit training's gradients in fp32 main_grad buffers with --bf16 (arguments.py sets
  // accumulate_allreduce_grads_in_fp32), or when asked; --grad-reduce-in-bf16 keeps them in bf16.
  // --main-grads-dtype bf16 keeps bf16's gradients in bf16 too (arguments.py turns the fp32 accumulation on only
  // when the main gradients are fp32).
  const bf16MainGrads = a.pick('main-grads-dtype') === 'bf16';
  const fp32Grads =
    precision !== undefined &&
    !has('grad-reduce-in-bf16') &&
    (has('accumulate-allreduce-grads-in-fp32') || (precision === 'bf16' && !bf16MainGrads));
  if (precision !== undefined) {
    const from = has('grad-reduce-in-bf16')
      ? '--grad-reduce-in-bf16'
      : has('accumulate-allreduce-grads-in-fp32')
        ? '--accumulate-allreduce-grads-in-fp32'
        : bf16MainGrads && precision === 'bf16'
          ? '--main-grads-dtype bf16'
          : `Megatron default with --${precision}`;
    c.set('parallel.fp32Gradients', fp32Grads, from, from.startsWith('Megatron default'));
  }
  importBuckets(c, a, dp, precision ?? context.precision, overlap, fp32Grads);

  importModel(c, a, tpv);
  importMoe(c, a, tpv);
  importTraining(c, a, dp, precision);
  importFp8(c, a, precision);
  importOptimizerState(c, a, precision ?? context.precision);

  for (const [name, values] of a.notModelled) {
    c.warn(`--${name}${values.length ? ` ${values.join(' ')}` : ''}: not modelled; ${NOT_MODELLED[name]}`);
  }
  if (a.unknown.length > 0) c.warn(`unknown Megatron flags, ignored: ${a.unknown.map(unknownFlagShown).join(' ')}`);
  const vars = a.stray.filter((w) => w.includes('$'));
  const others = a.stray.filter((w) => !w.includes('$'));
  if (vars.length > 0)
    c.warn(`shell variables are not expanded, so the flags they hold were not read: ${vars.join(' ')}`);
  if (others.length > 0) c.warn(`words that belong to no flag, ignored: ${others.join(' ')}`);
  if (a.stoppedAt) c.warn(`stopped reading at '${a.stoppedAt}' (the rest is another command or a redirection)`);
  if (a.values.size === 0)
    c.warn(
      'none of the Megatron flags clustersim reads were found; ' +
        "the parallel strategy is Megatron's default (tp 1, pp 1, no sequence parallel, no recompute)",
    );
  return c.result(SOURCE);
}

/** Megatron's `--cp-comm-type` values, and the scenario's `parallel.cpCommType` each runs as. */
const CP_COMM_TYPE_OF: Readonly<Record<string, CpCommType>> = {
  p2p: 'p2p',
  all_gather: 'all_gather',
  allgather: 'all_gather',
  a2a: 'a2a',
  'a2a+p2p': 'p2p',
};

/**
 * `--cp-comm-type` (one value, or one per layer): Transformer Engine's implementation of context parallelism.
 * Megatron's help spells the gather `allgather`, Transformer Engine accepts `all_gather`; both are read as the
 * all-gather. The hierarchical `a2a+p2p` is simulated as the ring over all cp ranks, and a per-layer list as its most
 * common value.
 */
function importCpCommType(c: ImportCollector, a: MegatronArgs, cp: number): void {
  const given = a.values.get('cp-comm-type');
  if (given === undefined) {
    // Without context parallelism the type means nothing: left out, so the list of what was taken stays short.
    if (cp > 1) c.set('parallel.cpCommType', 'p2p', 'Megatron default', true);
    return;
  }
  const values = given.split(' ');
  const wrong = values.find((v) => !Object.hasOwn(CP_COMM_TYPE_OF, v));
  if (wrong !== undefined) {
    const hint = wrong.includes('$')
      ? ' (shell variables are not expanded: paste the command as it ran, e.g. from the job log)'
      : '';
    throw new ScenarioError(
      '',
      `${SOURCE}: --cp-comm-type has '${wrong}'; expected p2p, all_gather, ` +
        `a2a or a2a+p2p (one, or one per layer)${hint}`,
    );
  }
  // Counted as they run (a2a+p2p runs as the ring, the gather has two spellings).
  const counts = new Map<CpCommType, number>();
  for (const v of values) counts.set(CP_COMM_TYPE_OF[v], (counts.get(CP_COMM_TYPE_OF[v]) ?? 0) + 1);
  const [common, n] = [...counts.entries()].sort((x, y) => y[1] - x[1])[0];
  const from = `--cp-comm-type ${values.length > 1 ? `(${common} on ${n} of ${values.length} layers)` : values[0]}`;
  c.set('parallel.cpCommType', common, from);
  if (cp === 1) c.warn(`${from}: ignored, context parallelism is off (--context-parallel-size 1)`);
  if (counts.size > 1) c.warn(`--cp-comm-type ${given}: a type per layer is not modelled; every layer runs ${common}`);
  if (values.includes('a2a+p2p'))
    c.warn(
      '--cp-comm-type a2a+p2p: the hierarchical all-to-all within groups then ring across them is not modelled; ' +
        'simulated as the p2p ring over all cp ranks',
    );
}

function importRecompute(c: ImportCollector, a: MegatronArgs, layers: number | undefined, pp: number): void {
  let granularity = a.pick('recompute-granularity');
  let from = granularity ? a.shown('recompute-granularity') : 'Megatron default';
  // validate_args: --recompute-activations is shorthand for --recompute-granularity selective.
  if (a.has('recompute-activations')) {
    granularity = 'selective';
    from = '--recompute-activations';
  }
  c.set('parallel.recompute', granularity ?? 'none', from, granularity === undefined);
  const method = a.pick('recompute-method');
  const n = a.int('recompute-num-layers');
  // validate_args: "recompute method is not yet supported for selective recomputing granularity".
  if (granularity === 'selective' && method !== undefined) {
    throw new ScenarioError(
      '',
      `${SOURCE}: ${from} (selective recompute) with --recompute-method ${method}: ` +
        'Megatron refuses it (a method applies to full recompute only); ' +
        'drop --recompute-method, or use --recompute-granularity full without --recompute-activations',
    );
  }
  // Megatron-core's TransformerConfig refuses full recompute without a method (older Megatron failed in
  // _checkpointed_forward: "Invalid activation recompute method"), and without a layer count.
  if (granularity === 'full' && method === undefined) {
    throw new ScenarioError(
      '',
      `${SOURCE}: ${from} without --recompute-method: Megatron refuses it ` +
        '(its TransformerConfig wants recompute_method block or uniform); ' +
        'add --recompute-method uniform --recompute-num-layers 1 to recompute every layer',
    );
  }
  if (granularity === 'full' && n === undefined)
    c.warn(
      `${from} --recompute-method ${method} without --recompute-num-layers: Megatron-core refuses it; ` +
        "taken as 1, older Megatron's default",
    );
  if (granularity === 'full' && method === 'block') {
    const perStage = layers !== undefined ? layers / pp : undefined;
    if (perStage === undefined || n === undefined || n < perStage) {
      c.warn(
        `--recompute-method block --recompute-num-layers ${n ?? 1}: ` +
          `Megatron recomputes only the first ${n ?? 1} layer(s) of each pipeline stage; ` +
          'simulated as full recompute of every layer (recompute time overestimated, activation memory underestimated)',
      );
    }
  } else if (granularity === 'full' && method === 'uniform' && n !== undefined && n > 1) {
    c.warn(
      `--recompute-method uniform --recompute-num-layers ${n}: Megatron checkpoints one input per ${n} layers; ` +
        'simulated as one per layer (activation memory slightly overestimated)',
    );
  } else if (granularity !== 'full' && (method !== undefined || n !== undefined)) {
    c.warn(
      '--recompute-method/--recompute-num-layers apply to full recompute only; ' +
        `ignored with ${granularity ? `${granularity} recompute` : 'no recompute'}`,
    );
  }
  if (a.has('distribute-saved-activations'))
    c.warn(
      '--distribute-saved-activations: not modelled; ' +
        'the recompute checkpoints are counted whole on every tensor-parallel rank',
    );
}

/**
 * DDP buckets: `--ddp-bucket-size` parameters, default max(40M, 1M × dp) (DistributedDataParallelConfig.bucket_size).
 * Megatron buckets have no small first bucket. Converted to MiB at the simulation's gradient width
 * (2 bytes in mixed precision) so a bucket holds as many parameters as Megatron's.
 */
function importBuckets(
  c: ImportCollector,
  a: MegatronArgs,
  dp: number | undefined,
  precision: TrainingPrecision | undefined,
  overlap: boolean,
  fp32Grads: boolean,
): void {
  const given = a.int('ddp-bucket-size');
  const params = given ?? Math.max(40_000_000, 1_000_000 * (dp ?? 1));
  const gradBytes = precision === 'fp32' || precision === 'tf32' || fp32Grads ? 4 : 2;
  const mib = (params * gradBytes) / MiB;
  const from = given
    ? `${a.shown('ddp-bucket-size')} parameters × ${gradBytes} B`
    : `Megatron default: max(40M, 1M × dp${dp ? ` ${dp}` : ''}) parameters × ${gradBytes} B`;
  c.set('parallel.ddp.bucketMB', mib, from, !given);
  c.set('parallel.ddp.firstBucketMB', mib, `${from} (no small first bucket)`, !given);
  if (!overlap) {
    c.warn(
      'without --overlap-grad-reduce Megatron reduces all gradients in one bucket after backward; ' +
        'simulated as its buckets reduced one after another after backward',
    );
  }
}
