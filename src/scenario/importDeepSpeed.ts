import { ScenarioError } from '../sim/errors.js';
import { MiB } from '../sim/engine/units.js';
import type { TrainingPrecision } from '../sim/setup.js';
import { ImportCollector, type ImportResult } from './importResult.js';

/**
 * Reading a DeepSpeed `ds_config.json` into scenario overrides. Field names and defaults follow the
 * DeepSpeed configuration reference (docs `config-json.md`) and `deepspeed/runtime/zero/config.py`
 * (`DeepSpeedZeroConfig`): `stage` 0, `reduce_bucket_size` and `allgather_bucket_size` 5e8
 * *elements*, `overlap_comm` false except for stage 3 where it defaults to true.
 *
 * The value `"auto"` (written by the Hugging Face Trainer integration, which fills it in from its own
 * arguments) leaves the scenario's field as it is.
 */

const SOURCE = '--deepspeed-config';

/** What the importer knows about the scenario it will be applied to. */
export interface DeepSpeedContext {
  /** Data-parallel size of the scenario (GPUs / (tp × pp), or parallel.dp): needed to relate the batch sizes. */
  dp?: number;
  /** How `dp` came about, for messages (`128 GPUs / (tp 1 × pp 1)`). */
  dpFrom?: string;
  /** The scenario's precision, used when the config enables neither fp16 nor bf16 (bucket sizes are in elements). */
  precision?: TrainingPrecision;
  /** The model's hidden size, from which the Hugging Face Trainer fills in `"auto"` bucket sizes. */
  hidden?: number;
  /** Whether the scenario so far (file, earlier imports) keeps fp32 gradients, which DeepSpeed's engine does not. */
  fp32Gradients?: boolean;
}

/** DeepSpeed's engine all-reduces stage-0 gradients in buffers of this many elements (`MEMORY_OPT_ALLREDUCE_SIZE`). */
const STAGE0_ALLREDUCE_ELEMENTS = 500_000_000;
const DEFAULT_BUCKET_ELEMENTS = 500_000_000;

const TOP_LEVEL_NO_EFFECT = new Set([
  'gradient_clipping', 'steps_per_print', 'wall_clock_breakdown', 'scheduler', 'zero_allow_untested_optimizer',
  'zero_force_ds_cpu_optimizer', 'prescale_gradients', 'gradient_predivide_factor', 'sparse_gradients', 'tensorboard',
  'wandb', 'csv_monitor', 'comet', 'flops_profiler', 'comms_logger', 'dump_state', 'checkpoint', 'memory_breakdown',
  'aio', 'autotuning', 'nebula', 'data_efficiency', 'disable_allgather',
]);
const TOP_LEVEL_NOT_MODELLED: Readonly<Record<string, string>> = {
  activation_checkpointing: 'whether layers are recomputed depends on the model code; set parallel.recompute',
  data_types: 'gradients are accumulated and communicated at the training precision',
  pipeline: 'DeepSpeed pipeline engine settings are not read; set parallel.pp and parallel.schedule',
  elasticity: 'the batch is simulated as configured, without elastic resizing',
  compression_training: 'compression is not modelled',
  sequence_parallel_size: 'DeepSpeed-Ulysses sequence parallelism is not modelled',
  torch_autocast: 'autocast is not modelled; the step runs at the scenario precision',
};
const ZERO_KNOWN = new Set([
  'stage', 'reduce_bucket_size', 'allgather_bucket_size', 'overlap_comm', 'contiguous_gradients', 'offload_optimizer',
  'offload_param', 'cpu_offload', 'cpu_offload_params', 'cpu_offload_use_pin_memory', 'reduce_scatter', 'allgather_partitions', 'round_robin_gradients',
  'sub_group_size', 'stage3_prefetch_bucket_size', 'stage3_param_persistence_threshold', 'stage3_max_live_parameters',
  'stage3_max_reuse_distance', 'stage3_gather_16bit_weights_on_model_save', 'stage3_gather_fp16_weights_on_model_save',
  'load_from_fp32_weights', 'elastic_checkpoint', 'ignore_unused_parameters', 'legacy_stage1', 'use_multi_rank_bucket_allreduce',
  'memory_efficient_linear', 'log_trace_cache_warnings', 'use_all_reduce_for_fetch_params', 'model_persistence_threshold',
  'max_live_parameters', 'max_reuse_distance', 'prefetch_bucket_size', 'param_persistence_threshold', 'gather_16bit_weights_on_model_save',
]);
const ZERO_NOT_MODELLED: Readonly<Record<string, string>> = {
  zero_hpz_partition_size: 'ZeRO++ hierarchical partitioning is not modelled',
  zero_quantized_weights: 'ZeRO++ quantized weights are not modelled',
  zero_quantized_gradients: 'ZeRO++ quantized gradients are not modelled',
  mics_shard_size: 'MiCS sharding is not modelled',
};

type Json = Record<string, unknown>;

function fail(source: string, message: string): never {
  throw new ScenarioError('', `${SOURCE} '${source}': ${message}`);
}

/** `line L, column C` of a character offset, for JSON errors. */
function lineCol(text: string, at: number): string {
  const before = text.slice(0, at).split('\n');
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

function parseJson(text: string, source: string): Json {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const msg = (err as Error).message;
    const pos = /position (\d+)/.exec(msg);
    fail(source, `not valid JSON${pos ? ` at ${lineCol(text, Number(pos[1]))}` : ''}: ${msg.replace(/ in JSON at position \d+.*$/, '')}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) fail(source, `expected a JSON object (a DeepSpeed config), found ${json === null ? 'null' : Array.isArray(json) ? 'a list' : typeof json}`);
  return json as Json;
}

/**
 * Builds scenario overrides from a DeepSpeed config file's text.
 * @param source the file's path, for messages
 * @throws ScenarioError naming the field: malformed JSON, a non-numeric size, an unknown stage or
 *   offload device, fp16 and bf16 both enabled, batch sizes that disagree with the scenario's dp
 */
export function importDeepSpeedConfig(text: string, source: string, context: DeepSpeedContext = {}): ImportResult {
  const cfg = parseJson(text, source);
  const c = new ImportCollector();
  const autos: string[] = [];
  const auto = (field: string, v: unknown) => {
    if (v === 'auto') autos.push(field);
    return v === 'auto';
  };
  const posInt = (field: string, v: unknown): number | undefined => {
    if (v === undefined || v === null || auto(field, v)) return undefined;
    // DeepSpeed configs often write sizes as 5e8; JSON reads them as numbers, which must be whole.
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) fail(source, `${field} is ${JSON.stringify(v)}; expected a positive whole number or "auto"`);
    return v;
  };
  const bool = (field: string, v: unknown): boolean | undefined => {
    if (v === undefined || v === null || auto(field, v)) return undefined;
    if (typeof v !== 'boolean') fail(source, `${field} is ${JSON.stringify(v)}; expected true, false or "auto"`);
    return v;
  };
  const section = (field: string, v: unknown): Json | undefined => {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) fail(source, `${field} is ${JSON.stringify(v)}; expected a mapping`);
    return v as Json;
  };

  const precision = importPrecision(c, cfg, source, bool, section);
  const effective = precision ?? context.precision;
  // DeepSpeed's engine reduces gradients in the parameters' type unless communication_data_type says fp32; it owns
  // them, so this also undoes a Megatron import's fp32 main_grad (Megatron-DeepSpeed).
  const commType = cfg.communication_data_type;
  const fp32Comm = commType === 'fp32' || commType === 'float32';
  if (commType !== undefined && typeof commType !== 'string') fail(source, `communication_data_type is ${JSON.stringify(commType)}; expected "fp16", "bf16" or "fp32"`);
  if (fp32Comm) c.set('parallel.fp32Gradients', true, `communication_data_type ${commType}`);
  else if (context.fp32Gradients) c.set('parallel.fp32Gradients', false, 'DeepSpeed reduces gradients in the parameters\' type (its engine owns them)');
  const gradBytes = effective === 'fp32' || effective === 'tf32' || fp32Comm ? 4 : 2;
  // An "auto" the import fills in as the Trainer would is no longer one the scenario's value stands for.
  const filledIn = new Set<string>();
  const filled = (field: string) => filledIn.add(field);
  importZero(c, cfg, source, { posInt, bool, section, auto, filled }, gradBytes, context.hidden);
  importBatch(c, cfg, source, posInt, filled, context);
  importOptimizer(c, cfg, source, section);

  const unknown: string[] = [];
  for (const k of Object.keys(cfg)) {
    if (k in TOP_LEVEL_NOT_MODELLED) c.warn(`${k}: not modelled; ${TOP_LEVEL_NOT_MODELLED[k]}`);
    else if (!TOP_LEVEL_NO_EFFECT.has(k) && !HANDLED.has(k)) unknown.push(k);
  }
  if (unknown.length > 0) c.warn(`unknown DeepSpeed fields, ignored: ${unknown.join(', ')}`);
  const left = autos.filter((f) => !filledIn.has(f));
  if (left.length > 0) c.warn(`"auto" (filled in by the Hugging Face Trainer) leaves the scenario's value, or its default: ${left.join(', ')}`);
  return c.result(SOURCE);
}

const HANDLED = new Set(['train_batch_size', 'train_micro_batch_size_per_gpu', 'gradient_accumulation_steps', 'zero_optimization', 'fp16', 'bf16', 'bfloat16', 'amp', 'optimizer', 'communication_data_type']);

type Readers = {
  posInt: (field: string, v: unknown) => number | undefined;
  bool: (field: string, v: unknown) => boolean | undefined;
  section: (field: string, v: unknown) => Json | undefined;
  auto: (field: string, v: unknown) => boolean;
  /** Marks an "auto" field as filled in by the import. */
  filled: (field: string) => void;
};

function importPrecision(c: ImportCollector, cfg: Json, source: string, bool: Readers['bool'], section: Readers['section']): TrainingPrecision | undefined {
  const fp16 = bool('fp16.enabled', section('fp16', cfg.fp16)?.enabled);
  // DeepSpeed accepts "bfloat16" as another name for the "bf16" section.
  const bfKey = cfg.bf16 !== undefined ? 'bf16' : 'bfloat16';
  const bf16 = bool(`${bfKey}.enabled`, section(bfKey, cfg[bfKey])?.enabled);
  const amp = bool('amp.enabled', section('amp', cfg.amp)?.enabled);
  if (fp16 && bf16) fail(source, `fp16.enabled and ${bfKey}.enabled are both true; DeepSpeed accepts one of them`);
  if (fp16) c.set('training.precision', 'fp16', 'fp16.enabled');
  else if (bf16) c.set('training.precision', 'bf16', `${bfKey}.enabled`);
  else if (amp) {
    c.set('training.precision', 'fp16', 'amp.enabled');
    c.warn('amp.enabled: NVIDIA Apex AMP is simulated as fp16 mixed precision');
  }
  const stated = [cfg.fp16, cfg[bfKey], cfg.amp].some((s) => s && typeof s === 'object' && (s as Json).enabled !== undefined);
  if (!fp16 && !bf16 && !amp && !stated) c.warn('neither fp16 nor bf16 is enabled: DeepSpeed would train in fp32; the scenario\'s precision is kept');
  return fp16 || amp ? 'fp16' : bf16 ? 'bf16' : undefined;
}

function importZero(c: ImportCollector, cfg: Json, source: string, r: Readers, gradBytes: number, hidden?: number): void {
  const z = r.section('zero_optimization', cfg.zero_optimization) ?? {};
  const zf = (k: string) => `zero_optimization.${k}`;
  let stage: 0 | 1 | 2 | 3 = 0;
  const rawStage = z.stage;
  // No "auto" here: the Hugging Face integration does not fill in the stage.
  if (rawStage !== undefined) {
    if (rawStage !== 0 && rawStage !== 1 && rawStage !== 2 && rawStage !== 3) fail(source, `${zf('stage')} is ${JSON.stringify(rawStage)}; expected 0, 1, 2 or 3`);
    stage = rawStage;
  }
  c.set('parallel.zero', stage, rawStage !== undefined ? zf('stage') : 'DeepSpeed default (no zero_optimization.stage)', rawStage === undefined);

  // Offload of the optimizer state (and the update) to the host; "cpu_offload: true" is the older spelling.
  const off = r.section(zf('offload_optimizer'), z.offload_optimizer);
  const device = off?.device;
  let offload: 'cpu' | 'none' = 'none';
  let offloadFrom = 'DeepSpeed default';
  if (device !== undefined && !r.auto(zf('offload_optimizer.device'), device)) {
    if (device === 'nvme') fail(source, `${zf('offload_optimizer.device')} is "nvme"; only "cpu" and "none" are modelled`);
    if (device !== 'cpu' && device !== 'none') fail(source, `${zf('offload_optimizer.device')} is ${JSON.stringify(device)}; expected "cpu" or "none"`);
    offload = device;
    offloadFrom = zf('offload_optimizer.device');
  } else if (r.bool(zf('cpu_offload'), z.cpu_offload)) {
    offload = 'cpu';
    offloadFrom = zf('cpu_offload');
  }
  if (device !== 'auto') c.set('parallel.offload', offload, offloadFrom, offloadFrom === 'DeepSpeed default');
  const param = r.section(zf('offload_param'), z.offload_param);
  if ((param?.device !== undefined && param.device !== 'none') || r.bool(zf('cpu_offload_params'), z.cpu_offload_params)) {
    c.warn(`${zf('offload_param')}: parameter offload is not modelled; the stage-3 weight shards stay on the GPU`);
  }

  // Buckets are counted in elements; the simulation sizes them in MiB of gradients.
  const mib = (elements: number) => Number(((elements * gradBytes) / MiB).toFixed(3));
  const bucket = r.posInt(zf('reduce_bucket_size'), z.reduce_bucket_size);
  const bucketAuto = z.reduce_bucket_size === 'auto';
  const bucketFrom = bucket ? `${zf('reduce_bucket_size')} ${bucket} elements × ${gradBytes} B` : `DeepSpeed default: 5e8 elements × ${gradBytes} B`;
  const overlapGiven = r.bool(zf('overlap_comm'), z.overlap_comm);
  const overlap = overlapGiven ?? stage === 3;
  const overlapFrom = overlapGiven !== undefined ? zf('overlap_comm') : `DeepSpeed default for stage ${stage}`;
  r.posInt(zf('allgather_bucket_size'), z.allgather_bucket_size);
  r.bool(zf('contiguous_gradients'), z.contiguous_gradients);
  if (stage === 0) {
    // The engine all-reduces gradients after backward (DeepSpeedEngine.allreduce_gradients), in buffers of 5e8 elements.
    c.set('parallel.ddp.overlap', false, 'DeepSpeed stage 0: gradients all-reduced after backward', true);
    const m = mib(STAGE0_ALLREDUCE_ELEMENTS);
    c.set('parallel.ddp.bucketMB', m, `DeepSpeed stage 0: buffers of 5e8 elements × ${gradBytes} B`, true);
    c.set('parallel.ddp.firstBucketMB', m, 'DeepSpeed stage 0: no small first bucket', true);
    if (bucket || overlapGiven !== undefined) c.warn(`${zf('reduce_bucket_size')}/${zf('overlap_comm')}: apply to ZeRO stages 1–3; ignored with stage 0`);
  } else {
    // The Hugging Face Trainer writes hidden_size² in place of "auto" (transformers' HfTrainerDeepSpeedConfig).
    const filled = bucketAuto && hidden !== undefined;
    const size = filled
      ? { mb: mib(hidden * hidden), from: `${zf('reduce_bucket_size')} "auto": the Hugging Face Trainer's hidden_size² = ${hidden * hidden} elements × ${gradBytes} B`, byDefault: false }
      : { mb: mib(bucket ?? DEFAULT_BUCKET_ELEMENTS), from: bucketFrom, byDefault: !bucket };
    if (filled) r.filled(zf('reduce_bucket_size'));
    if (!bucketAuto || filled) {
      c.set('parallel.zeroConfig.reduceBucketMB', size.mb, size.from, size.byDefault);
      // The step compiler packs stage-1 gradients into the DDP buckets; DeepSpeed has no small first bucket.
      if (stage === 1) {
        c.set('parallel.ddp.bucketMB', size.mb, size.from, size.byDefault);
        c.set('parallel.ddp.firstBucketMB', size.mb, `${size.from} (no small first bucket)`, size.byDefault);
      }
    }
    if (z.overlap_comm !== 'auto') c.set('parallel.zeroConfig.overlapComm', overlap, overlapFrom, overlapGiven === undefined);
    if ((stage === 1 || stage === 2) && z.allgather_bucket_size !== undefined) {
      c.warn(`${zf('allgather_bucket_size')}: not modelled; the updated weights are all-gathered in one collective per stage`);
    }
  }
  for (const k of Object.keys(z)) {
    if (k in ZERO_NOT_MODELLED) c.warn(`${zf(k)}: not modelled; ${ZERO_NOT_MODELLED[k]}`);
  }
  const unknown = Object.keys(z).filter((k) => !ZERO_KNOWN.has(k) && !(k in ZERO_NOT_MODELLED));
  if (unknown.length > 0) c.warn(`unknown zero_optimization fields, ignored: ${unknown.join(', ')}`);
}

/**
 * DeepSpeed's batch rule: train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps × dp.
 * Given two, it derives the third; given one, gradient accumulation is 1 (DeepSpeedConfig._set_batch_related_parameters).
 * An "auto" is unknown, not absent: the Hugging Face Trainer fills it in from its own arguments, and DeepSpeed then
 * checks the rule. So with two numbers and an "auto", the "auto" can only be the third that the rule gives; with
 * fewer numbers nothing is derived (and no default stands in for an "auto").
 */
function importBatch(c: ImportCollector, cfg: Json, source: string, posInt: Readers['posInt'], filled: (field: string) => void, context: DeepSpeedContext): void {
  const T = 'train_batch_size';
  const M = 'train_micro_batch_size_per_gpu';
  const A = 'gradient_accumulation_steps';
  const train = posInt(T, cfg[T]);
  const micro = posInt(M, cfg[M]);
  const accum = posInt(A, cfg[A]);
  const autos = [T, M, A].filter((f) => cfg[f] === 'auto');
  const dp = context.dp;
  const dpText = dp === undefined ? '' : `dp ${dp}${context.dpFrom ? ` (${context.dpFrom})` : ''}`;
  if (micro) c.set('training.microBatch', micro, M);
  if (train) c.set('training.globalBatch', train, T);
  const given = [train, micro, accum].filter((x) => x !== undefined).length;
  if (dp === undefined || (autos.length > 0 && given < 2)) {
    // Without dp nothing can be derived or checked; with one number and an "auto" the Trainer's arguments decide.
    if (train && micro && dp !== undefined && train % (micro * dp) !== 0) {
      fail(source, `${T} ${train} is not a multiple of ${M} ${micro} × ${dpText} = ${micro * dp}`);
    }
    return;
  }
  const derived = (field: string) => (cfg[field] === 'auto' ? ` (for its "auto")` : '');
  if (train && micro && accum) {
    if (train !== micro * accum * dp) {
      fail(source, `${T} ${train} ≠ ${M} ${micro} × ${A} ${accum} × ${dpText} = ${micro * accum * dp}; make the three agree for this cluster (DeepSpeed checks the same)`);
    }
  } else if (train && micro) {
    if (train % (micro * dp) !== 0) fail(source, `${T} ${train} is not a multiple of ${M} ${micro} × ${dpText} = ${micro * dp}, so ${A} would not be whole`);
  } else if (train && accum) {
    if (train % (accum * dp) !== 0) fail(source, `${T} ${train} is not a multiple of ${A} ${accum} × ${dpText} = ${accum * dp}, so ${M} would not be whole`);
    c.set('training.microBatch', train / (accum * dp), `${T} ${train} / (${A} ${accum} × dp ${dp})${derived(M)}`);
  } else if (micro && accum) {
    c.set('training.globalBatch', micro * accum * dp, `${M} ${micro} × ${A} ${accum} × dp ${dp}${derived(T)}`);
  } else if (train) {
    if (train % dp !== 0) fail(source, `${T} ${train} is not a multiple of ${dpText}, so ${M} would not be whole (${A} defaults to 1)`);
    c.set('training.microBatch', train / dp, `${T} ${train} / dp ${dp} (${A} defaults to 1)`);
  } else if (micro) {
    c.set('training.globalBatch', micro * dp, `${M} ${micro} × dp ${dp} (${A} defaults to 1)`);
  } else if (accum) {
    fail(source, `${A} is given without ${T} or ${M}; DeepSpeed needs one of them`);
  }
  // With two numbers the rule gives the third: an "auto" there is filled in as the Trainer must fill it.
  for (const f of autos) filled(f);
}

function importOptimizer(c: ImportCollector, cfg: Json, source: string, section: Readers['section']): void {
  const opt = section('optimizer', cfg.optimizer);
  if (!opt || opt.type === undefined || opt.type === 'auto') return;
  if (typeof opt.type !== 'string') fail(source, `optimizer.type is ${JSON.stringify(opt.type)}; expected a name such as "AdamW"`);
  const type = opt.type;
  if (/^sgd$/i.test(type)) c.set('training.optimizer', 'sgd', `optimizer.type ${type}`);
  else {
    c.set('training.optimizer', 'adam', `optimizer.type ${type}`);
    if (!/adam/i.test(type)) c.warn(`optimizer.type ${type}: simulated as Adam (two fp32 state tensors per parameter)`);
  }
}
