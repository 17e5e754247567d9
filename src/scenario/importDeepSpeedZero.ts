import { MiB } from '../sim/engine/units.js';
import type { ImportCollector } from './importResult.js';
import type { Json, Readers } from './importDeepSpeedReaders.js';
import { closest } from '../sim/closestName.js';

/**
 * The `zero_optimization` section of a DeepSpeed config. Field names and defaults follow the DeepSpeed configuration
 * reference (docs `config-json.md`) and `deepspeed/runtime/zero/config.py` (`DeepSpeedZeroConfig`): `stage` 0,
 * `reduce_bucket_size` and `allgather_bucket_size` 5e8 *elements*, `overlap_comm` false except for stage 3 where it
 * defaults to true (its `overlap_comm_valid` validator).
 */

/** DeepSpeed's engine all-reduces stage-0 gradients in buffers of this many elements (`MEMORY_OPT_ALLREDUCE_SIZE`). */
const STAGE0_ALLREDUCE_ELEMENTS = 500_000_000;
const DEFAULT_BUCKET_ELEMENTS = 500_000_000;

/**
 * The fields of DeepSpeed's ZeRO config (`DeepSpeedZeroConfig`, deepspeed/runtime/zero/config.py, with the stage3_*
 * aliases and older spellings), which forbids any other: an unknown one is refused, with the name it may have meant.
 */
const ZERO_KNOWN = new Set([
  'stage',
  'reduce_bucket_size',
  'allgather_bucket_size',
  'overlap_comm',
  'contiguous_gradients',
  'offload_optimizer',
  'offload_param',
  'cpu_offload',
  'cpu_offload_param',
  'cpu_offload_params',
  'cpu_offload_use_pin_memory',
  'reduce_scatter',
  'allgather_partitions',
  'round_robin_gradients',
  'sub_group_size',
  'zenflow',
  'leaf_module',
  'stage3_prefetch_bucket_size',
  'stage3_param_persistence_threshold',
  'stage3_model_persistence_threshold',
  'stage3_max_live_parameters',
  'stage3_max_reuse_distance',
  'stage3_gather_16bit_weights_on_model_save',
  'stage3_gather_fp16_weights_on_model_save',
  'stage3_module_granularity_threshold',
  'stage3_use_all_reduce_for_fetch_params',
  'stage3_allgather_sequential',
  'stage3_partition_stream_chunk_size',
  'prefetch_bucket_size',
  'param_persistence_threshold',
  'model_persistence_threshold',
  'max_live_parameters',
  'max_reuse_distance',
  'gather_16bit_weights_on_model_save',
  'module_granularity_threshold',
  'use_all_reduce_for_fetch_params',
  'allgather_sequential',
  'partition_stream_chunk_size',
  'load_from_fp32_weights',
  'elastic_checkpoint',
  'ignore_unused_parameters',
  'legacy_stage1',
  'use_multi_rank_bucket_allreduce',
  'memory_efficient_linear',
  'log_trace_cache_warnings',
  'pipeline_loading_checkpoint',
  'override_module_apply',
  'enable_sanity_checks',
  'save_muon_momentum_buffer_in_memory',
  'mics_hierarchical_params_gather',
]);

/** The fields of DeepSpeed's offload configs (deepspeed/runtime/zero/offload_config.py), which forbid any other. */
const OFFLOAD_KNOWN = {
  offload_optimizer: [
    'device',
    'nvme_path',
    'buffer_count',
    'pin_memory',
    'pipeline',
    'pipeline_read',
    'pipeline_write',
    'fast_init',
    'ratio',
    'super_offload',
    'convert_grad_on_cpu',
    'cpuadam_cores_perc',
  ],
  offload_param: ['device', 'nvme_path', 'buffer_count', 'buffer_size', 'max_in_cpu', 'pin_memory'],
} as const;

/** A field DeepSpeed's pydantic config would refuse, with the name it may have meant. */
function refuseUnknown(r: Readers, section: string, fields: Json, known: readonly string[]): void {
  for (const k of Object.keys(fields)) {
    if (known.includes(k)) continue;
    const meant = closest(k, known);
    r.problem(
      `${section}.${k}`,
      `unknown field${meant ? `; did you mean '${meant}'?` : ''} ` +
        `(DeepSpeed refuses fields its ${section} config does not have)`,
    );
  }
}
const ZERO_NOT_MODELLED: Readonly<Record<string, string>> = {
  zero_hpz_partition_size: 'ZeRO++ hierarchical partitioning is not modelled',
  zero_quantized_weights: 'ZeRO++ quantized weights are not modelled',
  zero_quantized_nontrainable_weights: 'ZeRO++ quantized weights are not modelled',
  zeropp_loco_param: 'LoCo-ZeRO++ is not modelled',
  zero_quantized_gradients: 'ZeRO++ quantized gradients are not modelled',
  mics_shard_size: 'MiCS sharding is not modelled',
};

const zf = (k: string) => `zero_optimization.${k}`;

/**
 * What the Hugging Face Trainer writes in place of an "auto" size that depends on the model, in elements, from the
 * model config's hidden_size (transformers src/transformers/integrations/deepspeed.py,
 * HfTrainerDeepSpeedConfig.trainer_config_finalize): reduce_bucket_size at every stage; the two stage3_* fields
 * only when the stage is 3 (`is_zero3()`), the prefetch size cut to a whole number with Python's int().
 */
export const HF_AUTO_SIZES = {
  reduce_bucket_size: { formula: 'hidden_size²', elements: (h: number) => h * h },
  // Python evaluates 0.9 * h * h left to right in doubles, as JavaScript does; int() truncates.
  stage3_prefetch_bucket_size: { formula: 'int(0.9 × hidden_size²)', elements: (h: number) => Math.trunc(0.9 * h * h) },
  stage3_param_persistence_threshold: { formula: '10 × hidden_size', elements: (h: number) => 10 * h },
} as const;

/** The scenario fields of ZeRO-3's prefetch size and persistence threshold (DeepSpeed's ZeRO-3 only). */
const STAGE3_FIELDS = {
  stage3_prefetch_bucket_size: 'parallel.zeroConfig.prefetchBucketElements',
  stage3_param_persistence_threshold: 'parallel.zeroConfig.persistenceThresholdElements',
} as const;

/**
 * Reads `zero_optimization` into the scenario's ZeRO stage, offload, buckets and overlap.
 * @param gradBytes bytes per gradient element, to turn bucket sizes in elements into MiB
 * @param hidden the model's hidden size, from which the Hugging Face Trainer fills in `"auto"` bucket sizes
 */
export function importZero(c: ImportCollector, cfg: Json, r: Readers, gradBytes: number, hidden?: number): void {
  const z = r.section('zero_optimization', cfg.zero_optimization) ?? {};
  let stage: 0 | 1 | 2 | 3 = 0;
  const rawStage = z.stage;
  // No "auto" here: the Hugging Face integration does not fill in the stage.
  if (rawStage !== undefined) {
    if (rawStage === 0 || rawStage === 1 || rawStage === 2 || rawStage === 3) stage = rawStage;
    else r.problem(zf('stage'), `expected 0, 1, 2 or 3, got ${JSON.stringify(rawStage)}`);
  }
  c.set(
    'parallel.zero',
    stage,
    rawStage !== undefined ? zf('stage') : 'DeepSpeed default (no zero_optimization.stage)',
    rawStage === undefined,
  );

  importOffload(c, z, r);

  // Buckets are counted in elements; the simulation sizes them in MiB of gradients (exactly: a bucket holds as many
  // bytes as DeepSpeed's).
  const mib = (elements: number) => (elements * gradBytes) / MiB;
  const bucket = r.posInt(zf('reduce_bucket_size'), z.reduce_bucket_size);
  const bucketAuto = z.reduce_bucket_size === 'auto';
  const bucketFrom = bucket
    ? `${zf('reduce_bucket_size')} ${bucket} elements × ${gradBytes} B`
    : `DeepSpeed default: 5e8 elements × ${gradBytes} B`;
  const overlapGiven = r.bool(zf('overlap_comm'), z.overlap_comm);
  const overlapAuto = z.overlap_comm === 'auto';
  const overlap = overlapGiven ?? stage === 3;
  const overlapFrom = overlapGiven !== undefined ? zf('overlap_comm') : `DeepSpeed default for stage ${stage}`;
  r.posInt(zf('allgather_bucket_size'), z.allgather_bucket_size);
  r.bool(zf('contiguous_gradients'), z.contiguous_gradients);
  if (stage === 0) {
    // The engine all-reduces gradients after backward (DeepSpeedEngine.allreduce_gradients), in buffers of 5e8
    // elements.
    c.set('parallel.ddp.overlap', false, 'DeepSpeed stage 0: gradients all-reduced after backward', true);
    const m = mib(STAGE0_ALLREDUCE_ELEMENTS);
    c.set('parallel.ddp.bucketMB', m, `DeepSpeed stage 0: buffers of 5e8 elements × ${gradBytes} B`, true);
    c.set('parallel.ddp.firstBucketMB', m, 'DeepSpeed stage 0: no small first bucket', true);
    // An "auto" here has nothing to stand for either: the warning covers it.
    if (bucketAuto) r.filled(zf('reduce_bucket_size'));
    if (overlapAuto) r.filled(zf('overlap_comm'));
    if (bucket || bucketAuto || overlapGiven !== undefined || overlapAuto)
      c.warn(`${zf('reduce_bucket_size')}/${zf('overlap_comm')}: apply to ZeRO stages 1–3; ignored with stage 0`);
  } else {
    let size: { mb: number; from: string; byDefault: boolean } | undefined = {
      mb: mib(bucket ?? DEFAULT_BUCKET_ELEMENTS),
      from: bucketFrom,
      byDefault: !bucket,
    };
    if (bucketAuto) {
      r.filled(zf('reduce_bucket_size'));
      const rule = HF_AUTO_SIZES.reduce_bucket_size;
      const elements = hidden !== undefined ? rule.elements(hidden) : undefined;
      size =
        elements !== undefined
          ? {
              mb: mib(elements),
              from:
                `${zf('reduce_bucket_size')} "auto": the Hugging Face Trainer's ${rule.formula} = ${elements} ` +
                `elements × ${gradBytes} B`,
              byDefault: false,
            }
          : undefined;
      if (!size)
        c.warn(
          `${zf('reduce_bucket_size')} "auto": the Hugging Face Trainer fills in ${rule.formula}, ` +
            "and the scenario's model has no hidden size here; " +
            "parallel.zeroConfig.reduceBucketMB keeps the scenario's value (or its default)",
        );
    }
    if (size) c.set('parallel.zeroConfig.reduceBucketMB', size.mb, size.from, size.byDefault);
    // DeepSpeed's stage 1 reduces in buckets of reduce_bucket_size as its stage 2 does (stage_1_and_2.py), not in the
    // DDP buckets of Megatron's distributed optimizer.
    if (stage === 1)
      c.set(
        'parallel.zeroConfig.stage1',
        'deepspeed',
        `${zf('stage')} 1: DeepSpeed's ZeRO-1 (reduce_bucket_size buckets)`,
      );
    if (stage === 3)
      c.set(
        'parallel.zeroConfig.stage3',
        'deepspeed',
        `${zf('stage')} 3: DeepSpeed's ZeRO-3 (gathers one module's parameters at a time)`,
      );
    if (!overlapAuto) c.set('parallel.zeroConfig.overlapComm', overlap, overlapFrom, overlapGiven === undefined);
    if ((stage === 1 || stage === 2) && z.allgather_bucket_size !== undefined) {
      c.warn(
        `${zf('allgather_bucket_size')}: not modelled; ` +
          'the updated weights are all-gathered in one collective per stage',
      );
    }
  }
  importStage3Sizes(c, z, r, stage, hidden);
  for (const k of Object.keys(z)) {
    if (Object.hasOwn(ZERO_NOT_MODELLED, k)) c.warn(`${zf(k)}: not modelled; ${ZERO_NOT_MODELLED[k]}`);
  }
  refuseUnknown(r, 'zero_optimization', z, [...ZERO_KNOWN, ...Object.keys(ZERO_NOT_MODELLED)]);
  for (const key of ['offload_optimizer', 'offload_param'] as const) {
    const block = z[key];
    if (block && typeof block === 'object' && !Array.isArray(block))
      refuseUnknown(r, zf(key), block as Json, OFFLOAD_KNOWN[key]);
  }
}

/** Offload of the optimizer state (and the update) to the host; `cpu_offload: true` is the older spelling. */
function importOffload(c: ImportCollector, z: Json, r: Readers): void {
  const off = r.section(zf('offload_optimizer'), z.offload_optimizer);
  const device = off?.device;
  let offload: 'cpu' | 'none' = 'none';
  let offloadFrom = 'DeepSpeed default';
  if (device !== undefined && !r.auto(zf('offload_optimizer.device'), device)) {
    if (device === 'cpu' || device === 'none') {
      offload = device;
      offloadFrom = zf('offload_optimizer.device');
    } else if (device === 'nvme')
      r.problem(
        zf('offload_optimizer.device'),
        'expected "cpu" or "none", got "nvme": offload to NVMe is not modelled',
      );
    else r.problem(zf('offload_optimizer.device'), `expected "cpu" or "none", got ${JSON.stringify(device)}`);
  } else if (r.bool(zf('cpu_offload'), z.cpu_offload)) {
    offload = 'cpu';
    offloadFrom = zf('cpu_offload');
  }
  if (device !== 'auto') c.set('parallel.offload', offload, offloadFrom, offloadFrom === 'DeepSpeed default');
  const param = r.section(zf('offload_param'), z.offload_param);
  if (
    (param?.device !== undefined && param.device !== 'none') ||
    r.bool(zf('cpu_offload_params'), z.cpu_offload_params)
  ) {
    c.warn(`${zf('offload_param')}: parameter offload is not modelled; the stage-3 weight shards stay on the GPU`);
  }
}

/**
 * ZeRO-3's prefetch size and persistence threshold, checked as DeepSpeed's counts (whole numbers ≥ 0), into the
 * scenario's fields at stage 3; an "auto" is what the Trainer would write there, from the model's hidden size. Below
 * stage 3 the Trainer leaves them "auto" and DeepSpeed does not use them, so nothing is said.
 */
function importStage3Sizes(c: ImportCollector, z: Json, r: Readers, stage: number, hidden: number | undefined): void {
  for (const key of ['stage3_prefetch_bucket_size', 'stage3_param_persistence_threshold'] as const) {
    const field = zf(key);
    const value = r.count(field, z[key]);
    if (z[key] === 'auto') r.filled(field);
    if (stage !== 3) continue;
    if (value !== undefined) {
      c.set(STAGE3_FIELDS[key], value, field);
      continue;
    }
    if (z[key] !== 'auto') continue;
    const rule = HF_AUTO_SIZES[key];
    if (hidden !== undefined)
      c.set(
        STAGE3_FIELDS[key],
        rule.elements(hidden),
        `${field} "auto": the Hugging Face Trainer's ${rule.formula} (hidden_size ${hidden})`,
      );
    else
      c.warn(
        `${field} "auto": the Hugging Face Trainer fills in ${rule.formula}, and the scenario's model has no hidden ` +
          `size here; ${STAGE3_FIELDS[key]} keeps the scenario's value (or DeepSpeed's default)`,
      );
  }
}
