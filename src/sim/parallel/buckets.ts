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
function packBuckets(tensors: readonly ParamTensor[], bytesPerElement: number, limitOf: (index: number) => number, closeAfterCrossing: boolean): GradBucket[] {
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
export function assignBuckets(tensors: readonly ParamTensor[], bytesPerElement: number, firstBucketBytes: number, bucketBytes: number): GradBucket[] {
  return packBuckets(tensors, bytesPerElement, (index) => (index === 0 ? firstBucketBytes : bucketBytes), true);
}

/**
 * DeepSpeed ZeRO's reduction buckets (`reduce_independent_p_g_buckets_and_remove_grads` in stage 1–2,
 * `__add_grad_to_ipg_bucket` in stage 3): a gradient that would take the bucket past `reduce_bucket_size` first
 * sends the bucket off, then starts the next one; so a bucket stays within the size unless one tensor alone is
 * larger. Same order as DDP's.
 */
export function assignZeroBuckets(tensors: readonly ParamTensor[], bytesPerElement: number, bucketBytes: number): GradBucket[] {
  return packBuckets(tensors, bytesPerElement, () => bucketBytes, false);
}
