import { MiB } from '../engine/units.js';
import type { ParallelSetup } from '../setup.js';
import type { ParamTensor } from '../workload/model.js';

/** One DDP gradient bucket: the tensors whose gradients it holds and its size. */
export interface GradBucket {
  index: number;
  tensors: string[];
  bytes: number;
}

/**
 * Packs tensors in reverse registration order (the order their gradients become ready in backward) into
 * buckets, never splitting a tensor. `closeAfterCrossing`: a bucket closes once it reaches its limit (DDP);
 * otherwise a tensor that would take a non-empty bucket past the limit closes it first (DeepSpeed).
 */
function packBuckets(
  tensors: readonly ParamTensor[],
  bytesPerElement: number,
  limitOf: (index: number) => number,
  closeAfterCrossing: boolean,
): GradBucket[] {
  const buckets: GradBucket[] = [];
  let current: GradBucket = { index: 0, tensors: [], bytes: 0 };
  const close = () => {
    buckets.push(current);
    current = { index: buckets.length, tensors: [], bytes: 0 };
  };
  for (let i = tensors.length - 1; i >= 0; i--) {
    const bytes = tensors[i].elements * bytesPerElement;
    if (!closeAfterCrossing && current.tensors.length > 0 && current.bytes + bytes > limitOf(buckets.length)) close();
    current.tensors.push(tensors[i].name);
    current.bytes += bytes;
    if (closeAfterCrossing && current.bytes >= limitOf(buckets.length)) close();
  }
  if (current.tensors.length > 0) buckets.push(current);
  return buckets;
}

/**
 * PyTorch DDP's bucket assignment (Reducer, `compute_bucket_assignment_by_size`): tensors are packed into a
 * bucket until it reaches its size limit; the first bucket's limit is small (1 MiB by default) so
 * communication starts early, the others use `bucket_cap_mb`. A tensor larger than the limit gets a
 * bucket of its own (buckets are closed after crossing the limit, never split a tensor).
 */
export function assignBuckets(
  tensors: readonly ParamTensor[],
  bytesPerElement: number,
  firstBucketBytes: number,
  bucketBytes: number,
): GradBucket[] {
  return packBuckets(tensors, bytesPerElement, (index) => (index === 0 ? firstBucketBytes : bucketBytes), true);
}

/**
 * DeepSpeed ZeRO's reduction buckets (`reduce_independent_p_g_buckets_and_remove_grads` in stage 1–2,
 * `__add_grad_to_ipg_bucket` in stage 3): a gradient that would take the bucket past `reduce_bucket_size` first
 * sends the bucket off, then starts the next one; so a bucket stays within the size unless one tensor alone is
 * larger. Same order as DDP's.
 */
export function assignZeroBuckets(
  tensors: readonly ParamTensor[],
  bytesPerElement: number,
  bucketBytes: number,
): GradBucket[] {
  return packBuckets(tensors, bytesPerElement, () => bucketBytes, false);
}

/** What sizes a stage's data-parallel gradient buckets: who packs them, and how large. */
export interface ReductionBuckets {
  /** `ddp`: PyTorch's / Megatron's packing (close after crossing); `zero`: DeepSpeed's (close before crossing). */
  packing: 'ddp' | 'zero';
  bucketBytes: number;
  firstBucketBytes: number;
}

/** Whether `zero: 1` runs DeepSpeed's ZeRO-1 rather than Megatron's distributed optimizer. */
export function isDeepSpeedStage1(par: Pick<ParallelSetup, 'zero' | 'zeroConfig'>): boolean {
  return par.zero === 1 && par.zeroConfig.stage1 === 'deepspeed';
}

/**
 * The gradient buckets of the data-parallel reduction, as each framework sizes them:
 * - zero 0, PyTorch DDP or Megatron's DDP: `ddp.bucketMB`, the first one `ddp.firstBucketMB`.
 * - zero 1 `megatron`, Megatron-Core's distributed optimizer: the same DDP buckets; it reduce-scatters each bucket
 *   of its gradient buffer (megatron/core/distributed/param_and_grad_buffer.py, `start_grad_sync`), and the buckets
 *   are laid out in reverse order, each closed once it reaches `bucket_size` parameters
 *   (`_compute_default_per_buffer_param_layout`; --ddp-bucket-size, default max(40M, 1M × dp), training.py
 *   `resolve_ddp_bucket_size`).
 * - zero 1 `deepspeed`, DeepSpeed's stage 1 (`DeepSpeedZeroOptimizer` with partition_grads off): the same ipg buckets
 *   of `reduce_bucket_size` as stage 2 (deepspeed/runtime/zero/stage_1_and_2.py,
 *   `reduce_independent_p_g_buckets_and_remove_grads`, reached from the backward hooks when overlap_comm is on and
 *   from `reduce_gradients` after backward when it is off), only at the gradient-accumulation boundary
 *   (`reduce_ready_partitions_and_remove_grads`).
 * - zero 2 and 3, DeepSpeed: `zeroConfig.reduceBucketMB`.
 */
export function reductionBuckets(par: Pick<ParallelSetup, 'zero' | 'zeroConfig' | 'ddp'>): ReductionBuckets {
  if (par.zero >= 2 || isDeepSpeedStage1(par)) {
    const bytes = par.zeroConfig.reduceBucketMB * MiB;
    return { packing: 'zero', bucketBytes: bytes, firstBucketBytes: bytes };
  }
  return { packing: 'ddp', bucketBytes: par.ddp.bucketMB * MiB, firstBucketBytes: par.ddp.firstBucketMB * MiB };
}

/** Packs a stage's gradient tensors into the buckets {@link reductionBuckets} describes. */
export function assignReductionBuckets(
  tensors: readonly ParamTensor[],
  bytesPerElement: number,
  par: Pick<ParallelSetup, 'zero' | 'zeroConfig' | 'ddp'>,
): GradBucket[] {
  const b = reductionBuckets(par);
  return b.packing === 'zero'
    ? assignZeroBuckets(tensors, bytesPerElement, b.bucketBytes)
    : assignBuckets(tensors, bytesPerElement, b.firstBucketBytes, b.bucketBytes);
}

/**
 * Gradient bucket buffers a rank holds beyond its gradients. DeepSpeed copies gradients into ipg buffers: at stages 1
 * and 2 one of `reduce_bucket_size`, and a second only with overlap_comm ("double buffers to avoid data access
 * conflict", stage_1_and_2.py); at stage 3 one flat buffer (stage3.py `__ipg_bucket_flat_buffer`). DDP's and
 * Megatron's buckets are the gradients themselves: Megatron's are views into its contiguous gradient buffer, reduced in
 * place (megatron/core/distributed/param_and_grad_buffer.py); PyTorch DDP's flat buckets alias the gradients with
 * gradient_as_bucket_view, and without it are the second copy `memoryPerGpu` counts as `ddpBucketCopy`. So none.
 */
export function reductionBuffers(par: Pick<ParallelSetup, 'zero' | 'zeroConfig' | 'ddp' | 'pp'>): number {
  if (par.zero === 3) return 1;
  if (reductionBuckets(par).packing === 'zero') return reductionOverlaps(par) ? 2 : 1;
  return 0;
}

/**
 * Whether the gradient reduction overlaps backward: `ddp.overlap` without ZeRO, else `zeroConfig.overlapComm`, except
 * that DeepSpeed turns overlap_comm off for a pipeline (`_configure_zero_optimizer` in deepspeed/runtime/engine.py:
 * "Pipeline parallelism does not support overlapped communication, will be disabled."), which with pp > 1 only its
 * stage 1 can meet.
 */
export function reductionOverlaps(par: Pick<ParallelSetup, 'zero' | 'zeroConfig' | 'ddp' | 'pp'>): boolean {
  if (par.zero === 0) return par.ddp.overlap;
  if (isDeepSpeedStage1(par) && par.pp > 1) return false;
  return par.zeroConfig.overlapComm;
}
