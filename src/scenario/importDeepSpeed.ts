import { ScenarioError } from '../sim/errors.js';
import type { TrainingPrecision } from '../sim/setup.js';
import { InvalidScenarioError } from './errors.js';
import { ImportCollector, type ImportResult } from './importResult.js';
import { deepSpeedReaders, type Json, type Readers } from './importDeepSpeedReaders.js';
import { importZero } from './importDeepSpeedZero.js';
import { duplicateJsonKeys } from './jsonDuplicateKeys.js';
import { closest } from '../sim/closestName.js';

/**
 * Reading a DeepSpeed `ds_config.json` into scenario overrides (the `zero_optimization` section in
 * importDeepSpeedZero.ts). Every malformed field is reported at once, each with where it is, what it holds and
 * what is allowed; only JSON that cannot be read at all stops at the first error.
 *
 * The value `"auto"` (written for the Hugging Face Trainer integration, which fills it in from its own arguments
 * and the model) is filled in as the Trainer would where the import knows enough: a batch field from the two others
 * and dp, `reduce_bucket_size` from the model's hidden size. Where it cannot be, a warning says so, and the
 * scenario's field stays as it is; an "auto" with no scenario field to go to is named as not modelled.
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

const TOP_LEVEL_NO_EFFECT = new Set([
  'gradient_clipping',
  'steps_per_print',
  'wall_clock_breakdown',
  'scheduler',
  'zero_allow_untested_optimizer',
  'zero_force_ds_cpu_optimizer',
  'prescale_gradients',
  'gradient_predivide_factor',
  'sparse_gradients',
  'tensorboard',
  'wandb',
  'csv_monitor',
  'comet',
  'flops_profiler',
  'comms_logger',
  'dump_state',
  'checkpoint',
  'memory_breakdown',
  'aio',
  'autotuning',
  'nebula',
  'data_efficiency',
  'disable_allgather',
  // DeepSpeed fields with no bearing on a step's time or memory here, listed so that none is taken for a typo.
  'gradient_accumulation_dtype',
  'seq_parallel_communication_data_type',
  'dataloader_drop_last',
  'hybrid_engine',
  'timers',
  'eigenvalue',
  'load_universal_checkpoint',
  'use_node_local_storage',
  'graph_harvesting',
  'monitor_config',
  'quantize_training',
  'weight_quantization',
]);
const TOP_LEVEL_NOT_MODELLED: Readonly<Record<string, string>> = {
  activation_checkpointing: 'whether layers are recomputed depends on the model code; set parallel.recompute',
  data_types: 'gradients are accumulated and communicated at the training precision',
  pipeline: 'DeepSpeed pipeline engine settings are not read; set parallel.pp and parallel.schedule',
  elasticity: 'the batch is simulated as configured, without elastic resizing',
  compression_training: 'compression is not modelled',
  sequence_parallel_size: 'DeepSpeed-Ulysses sequence parallelism is not modelled',
  torch_autocast: 'autocast is not modelled; the step runs at the scenario precision',
  sparse_attention: 'block-sparse attention is not modelled; attention is dense',
  curriculum_learning: 'the sequence-length curriculum is not modelled; every step runs at training.seqLen',
  progressive_layer_drop: 'layer dropping is not modelled; every layer runs',
  compile: 'compiling the engine is not modelled; set training.kernels (fused is the default)',
};

/** Stops at an input that cannot be read at all (not JSON, not an object): nothing else can be checked. */
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
    fail(
      source,
      `not valid JSON${pos ? ` at ${lineCol(text, Number(pos[1]))}` : ''}: ` +
        `${msg.replace(/ in JSON at position \d+.*$/, '')}`,
    );
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    fail(
      source,
      'expected a JSON object (a DeepSpeed config), found ' +
        `${json === null ? 'null' : Array.isArray(json) ? 'a list' : typeof json}`,
    );
  const twice = duplicateJsonKeys(text);
  if (twice.length > 0)
    fail(
      source,
      `${twice.map((k) => `'${k}'`).join(', ')} given twice; DeepSpeed stops at duplicate keys ` +
        '("Duplicate keys in DeepSpeed config"), and which one counts would be a guess: keep one',
    );
  return json as Json;
}

/**
 * Builds scenario overrides from a DeepSpeed config file's text.
 * @param source the file's path, for messages
 * @throws ScenarioError for JSON that cannot be read, or an InvalidScenarioError listing every bad field: a
 *   non-numeric size, an unknown stage or offload device, fp16 and bf16 both enabled, batch sizes that disagree with
 *   the scenario's dp
 */
export function importDeepSpeedConfig(text: string, source: string, context: DeepSpeedContext = {}): ImportResult {
  const cfg = parseJson(text, source);
  const c = new ImportCollector();
  const r = deepSpeedReaders();

  const precision = importPrecision(c, cfg, r);
  const effective = precision ?? context.precision;
  // DeepSpeed's engine keeps gradients in the parameters' type and reduces them so unless communication_data_type says
  // fp32, which converts each bucket for its collective and back (stage_1_and_2.py gradient_reduction_w_predivide). It
  // owns them, so this also undoes a Megatron import's fp32 main_grad (Megatron-DeepSpeed).
  const fp32Comm = communicationIsFp32(cfg, r);
  if (context.fp32Gradients)
    c.set('parallel.fp32Gradients', false, "DeepSpeed keeps gradients in the parameters' type (its engine owns them)");
  if (fp32Comm)
    c.set(
      'parallel.fp32Reduction',
      true,
      `communication_data_type ${String(cfg.communication_data_type)}: 16-bit gradients reduced in fp32`,
    );
  const gradBytes = effective === 'fp32' || effective === 'tf32' ? 4 : 2;
  importZero(c, cfg, r, gradBytes, context.hidden);
  importBatch(c, cfg, r, context);
  importOptimizer(c, cfg, r);
  const unknown = topLevelUnknown(c, cfg, r);
  if (r.problems.length > 0) throw new InvalidScenarioError(`${SOURCE} '${source}'`, [...r.problems]);

  if (unknown.length > 0) c.warn(`unknown DeepSpeed fields, ignored: ${unknown.join(', ')}`);
  const left = r.autos.filter((f) => !r.filledIn.has(f));
  if (left.length > 0)
    c.warn(
      `"auto" (filled in by the Hugging Face Trainer) leaves the scenario's value, or its default: ${left.join(', ')}`,
    );
  return c.result(SOURCE);
}

/**
 * Whether gradients are communicated in fp32. DeepSpeed lower-cases the value and accepts fp16, bf16 and fp32
 * (`get_communication_data_type`, deepspeed/runtime/config.py); anything else stops it.
 */
function communicationIsFp32(cfg: Json, r: Readers): boolean {
  const v = cfg.communication_data_type;
  if (v === undefined || v === null) return false;
  const type = typeof v === 'string' ? v.toLowerCase() : undefined;
  if (type !== 'fp16' && type !== 'bf16' && type !== 'fp32') {
    r.problem('communication_data_type', `expected "fp16", "bf16" or "fp32", got ${JSON.stringify(v)}`);
    return false;
  }
  return type === 'fp32';
}

/**
 * The top-level fields the import does not know. DeepSpeed itself ignores unknown top-level fields, so a misspelt
 * one leaves the setting at its default: one within a typo of a field the import reads, or knows, is refused with the
 * name it meant; the others are returned, to be warned of as ignored. Fields known to be not modelled are warned of.
 */
function topLevelUnknown(c: ImportCollector, cfg: Json, r: Readers): string[] {
  const known = [...HANDLED, ...TOP_LEVEL_NO_EFFECT, ...Object.keys(TOP_LEVEL_NOT_MODELLED)];
  const unknown: string[] = [];
  for (const k of Object.keys(cfg)) {
    if (Object.hasOwn(TOP_LEVEL_NOT_MODELLED, k)) c.warn(`${k}: not modelled; ${TOP_LEVEL_NOT_MODELLED[k]}`);
    else if (TOP_LEVEL_NO_EFFECT.has(k) || HANDLED.has(k)) continue;
    else {
      const meant = closest(k, known);
      if (meant)
        r.problem(
          k,
          `unknown field; did you mean '${meant}'? (DeepSpeed ignores unknown top-level fields, ` +
            `which would leave '${meant}' at its default)`,
        );
      else unknown.push(k);
    }
  }
  return unknown;
}

const HANDLED = new Set([
  'train_batch_size',
  'train_micro_batch_size_per_gpu',
  'gradient_accumulation_steps',
  'zero_optimization',
  'fp16',
  'bf16',
  'bfloat16',
  'amp',
  'optimizer',
  'communication_data_type',
]);

function importPrecision(c: ImportCollector, cfg: Json, r: Readers): TrainingPrecision | undefined {
  const { bool, section } = r;
  const fp16 = bool('fp16.enabled', section('fp16', cfg.fp16)?.enabled);
  // DeepSpeed accepts "bfloat16" as another name for the "bf16" section.
  const bfKey = cfg.bf16 !== undefined ? 'bf16' : 'bfloat16';
  const bf16 = bool(`${bfKey}.enabled`, section(bfKey, cfg[bfKey])?.enabled);
  const amp = bool('amp.enabled', section('amp', cfg.amp)?.enabled);
  if (fp16 && bf16) {
    r.problem(
      'fp16.enabled',
      `true, and so is ${bfKey}.enabled; DeepSpeed accepts one of them (set the other to false)`,
    );
    return undefined;
  }
  if (fp16) c.set('training.precision', 'fp16', 'fp16.enabled');
  else if (bf16) c.set('training.precision', 'bf16', `${bfKey}.enabled`);
  else if (amp) {
    c.set('training.precision', 'fp16', 'amp.enabled');
    c.warn('amp.enabled: NVIDIA Apex AMP is simulated as fp16 mixed precision');
  }
  const stated = [cfg.fp16, cfg[bfKey], cfg.amp].some(
    (s) => s && typeof s === 'object' && (s as Json).enabled !== undefined,
  );
  if (!fp16 && !bf16 && !amp && !stated)
    c.warn("neither fp16 nor bf16 is enabled: DeepSpeed would train in fp32; the scenario's precision is kept");
  return fp16 || amp ? 'fp16' : bf16 ? 'bf16' : undefined;
}

/**
 * DeepSpeed's batch rule: train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps × dp.
 * Given two, it derives the third; given one, gradient accumulation is
 * 1 (DeepSpeedConfig._set_batch_related_parameters). An "auto" is unknown, not absent: the Hugging Face Trainer fills
 * it in from its own arguments, and DeepSpeed then checks the rule. So with two numbers and an "auto", the "auto" can
 * only be the third that the rule gives; with fewer numbers nothing is derived (and no default stands in for an
 * "auto").
 */
function importBatch(c: ImportCollector, cfg: Json, r: Readers, context: DeepSpeedContext): void {
  const T = 'train_batch_size';
  const M = 'train_micro_batch_size_per_gpu';
  const A = 'gradient_accumulation_steps';
  const train = r.posInt(T, cfg[T]);
  const micro = r.posInt(M, cfg[M]);
  const accum = r.posInt(A, cfg[A]);
  // A malformed one is reported as such; the rule is not checked without it (its absence would mislead).
  if ([T, M, A].some((f) => r.isBad(f))) return;
  const autos = [T, M, A].filter((f) => cfg[f] === 'auto');
  const dp = context.dp;
  const dpText = dp === undefined ? '' : `dp ${dp}${context.dpFrom ? ` (${context.dpFrom})` : ''}`;
  if (micro) c.set('training.microBatch', micro, M);
  if (train) c.set('training.globalBatch', train, T);
  const given = [train, micro, accum].filter((x) => x !== undefined).length;
  if (dp === undefined || (autos.length > 0 && given < 2)) {
    // Without dp nothing can be derived or checked; with one number and an "auto" the Trainer's arguments decide.
    if (train && micro && dp !== undefined && train % (micro * dp) !== 0) {
      r.problem(T, `${train} is not a multiple of ${M} ${micro} × ${dpText} = ${micro * dp}`);
    }
    return;
  }
  const derived = (field: string) => (cfg[field] === 'auto' ? ` (for its "auto")` : '');
  if (train && micro && accum) {
    if (train !== micro * accum * dp) {
      r.problem(
        T,
        `${train} ≠ ${M} ${micro} × ${A} ${accum} × ${dpText} = ${micro * accum * dp}; ` +
          'make the three agree for this cluster (DeepSpeed checks the same)',
      );
    }
  } else if (train && micro) {
    if (train % (micro * dp) !== 0)
      r.problem(
        T,
        `${train} is not a multiple of ${M} ${micro} × ${dpText} = ${micro * dp}, so ${A} would not be whole`,
      );
  } else if (train && accum) {
    if (train % (accum * dp) !== 0)
      r.problem(
        T,
        `${train} is not a multiple of ${A} ${accum} × ${dpText} = ${accum * dp}, so ${M} would not be whole`,
      );
    else c.set('training.microBatch', train / (accum * dp), `${T} ${train} / (${A} ${accum} × dp ${dp})${derived(M)}`);
  } else if (micro && accum) {
    c.set('training.globalBatch', micro * accum * dp, `${M} ${micro} × ${A} ${accum} × dp ${dp}${derived(T)}`);
  } else if (train) {
    if (train % dp !== 0)
      r.problem(T, `${train} is not a multiple of ${dpText}, so ${M} would not be whole (${A} defaults to 1)`);
    else c.set('training.microBatch', train / dp, `${T} ${train} / dp ${dp} (${A} defaults to 1)`);
  } else if (micro) {
    c.set('training.globalBatch', micro * dp, `${M} ${micro} × dp ${dp} (${A} defaults to 1)`);
  } else if (accum) {
    r.problem(A, `given without ${T} or ${M}; DeepSpeed needs one of them`);
  }
  // With two numbers the rule gives the third: an "auto" there is filled in as the Trainer must fill it.
  for (const f of autos) r.filled(f);
}

function importOptimizer(c: ImportCollector, cfg: Json, r: Readers): void {
  const opt = r.section('optimizer', cfg.optimizer);
  if (!opt || opt.type === undefined || r.auto('optimizer.type', opt.type)) return;
  if (typeof opt.type !== 'string') {
    r.problem('optimizer.type', `expected a name such as "AdamW", got ${JSON.stringify(opt.type)}`);
    return;
  }
  const type = opt.type;
  if (/^sgd$/i.test(type)) c.set('training.optimizer', 'sgd', `optimizer.type ${type}`);
  else {
    c.set('training.optimizer', 'adam', `optimizer.type ${type}`);
    if (!/adam/i.test(type)) c.warn(`optimizer.type ${type}: simulated as Adam (two fp32 state tensors per parameter)`);
  }
}
