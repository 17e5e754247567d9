import { elementsPerTpRank, type ParamTensor } from '../workload/model.js';
import type { Block } from '../workload/ops.js';

/**
 * How many collectives ZeRO-3 makes of a block's weights and gradients, and how large each is.
 *
 * PyTorch FSDP gathers one wrapped unit (a transformer block) in one all-gather and reduce-scatters its gradients in
 * one call: one collective of each a block.
 *
 * DeepSpeed's ZeRO-3 works on the parameters, as v0.6.2 (the version of the ZeRO-3 runs validated) has it:
 * - A parameter under `stage3_param_persistence_threshold` elements (default 1e5, runtime/zero/constants.py) is
 *   persistent: it is never partitioned, so it is not gathered before a pass (stage3.py `persistent_parameters`:
 *   `ds_numel < threshold`).
 * - The others are gathered as `PartitionedParameterCoordinator.fetch_sub_module` asks for them. Once its trace is
 *   complete it prefetches the parameters that come next, popping them off the trace until it holds at least
 *   `stage3_prefetch_bucket_size` elements (default 5e7; the loop stops once `numel_prefetching` reaches the bucket,
 *   so one group may pass it by one parameter), and gathers each group in one `all_gather_coalesced` call
 *   (partition_parameters.py). A parameter larger than the bucket is therefore gathered on its own.
 * - Gradients go into the reduce bucket in the order backward produces them. Before a gradient is added, a bucket
 *   that already holds some and would pass `reduce_bucket_size` elements is reduce-scattered
 *   (stage3.py `reduce_independent_p_g_buckets_and_remove_grads`). A gradient larger than the bucket thus goes in a
 *   bucket of its own, and so does whatever small gradient comes between two large ones.
 * The groups are formed within a block here: DeepSpeed's run on across block boundaries, which for blocks of more
 * than one group changes only where the block's first and last groups end.
 */

/** DeepSpeed's defaults, runtime/zero/constants.py at v0.6.2 (the same to this day). */
export const DEEPSPEED_PREFETCH_BUCKET_ELEMENTS = 5e7;
export const DEEPSPEED_PERSISTENCE_THRESHOLD_ELEMENTS = 1e5;

/** The elements of each all-gather DeepSpeed makes of parameters of these sizes, in the order it fetches them. */
export function deepspeedGatherGroups(
  elements: readonly number[],
  bucketElements = DEEPSPEED_PREFETCH_BUCKET_ELEMENTS,
  persistenceThresholdElements = DEEPSPEED_PERSISTENCE_THRESHOLD_ELEMENTS,
): number[] {
  const groups: number[] = [];
  let open = 0;
  for (const n of elements) {
    if (n < persistenceThresholdElements) continue;
    open += n;
    if (open >= bucketElements) {
      groups.push(open);
      open = 0;
    }
  }
  if (open > 0) groups.push(open);
  return groups;
}

/**
 * The elements of each reduce-scatter DeepSpeed makes of gradients of these sizes, in the order backward makes them.
 */
export function deepspeedReduceBuckets(elements: readonly number[], bucketElements: number): number[] {
  const buckets: number[] = [];
  let open = 0;
  for (const n of elements) {
    if (open > 0 && open + n > bucketElements) {
      buckets.push(open);
      open = 0;
    }
    open += n;
  }
  if (open > 0) buckets.push(open);
  return buckets;
}

/** DeepSpeed's ZeRO-3 sizes, in elements (undefined: its defaults). */
export interface DeepSpeedZero3 {
  reduceBucketElements: number;
  prefetchBucketElements?: number;
  persistenceThresholdElements?: number;
}

/** A block's ZeRO-3 collectives: the elements of each weight all-gather and each gradient reduce-scatter. */
export interface BlockZero3Collectives {
  gathers: number[];
  reductions: number[];
}

/** Elements per TP rank of each parameter a block's backward makes a gradient of, in the order it makes them. */
function blockParamElements(block: Block, tp: number, all: ReadonlyMap<string, ParamTensor>): number[] {
  return block.backward.flatMap((op) => (op.gradParams ?? []).map((name) => elementsPerTpRank(all.get(name)!, tp)));
}

/**
 * A block's ZeRO-3 collectives, in elements: FSDP's one all-gather and one reduce-scatter of the whole block, or, given
 * DeepSpeed's sizes, DeepSpeed's per-parameter groups. Empty for a block without weights.
 */
export function blockZero3Collectives(
  block: Block,
  tp: number,
  all: ReadonlyMap<string, ParamTensor>,
  deepspeed: DeepSpeedZero3 | undefined,
): BlockZero3Collectives {
  const backwardOrder = blockParamElements(block, tp, all);
  const total = backwardOrder.reduce((a, n) => a + n, 0);
  if (total === 0) return { gathers: [], reductions: [] };
  if (!deepspeed) return { gathers: [total], reductions: [total] };
  return {
    gathers: deepspeedGatherGroups(
      [...backwardOrder].reverse(),
      deepspeed.prefetchBucketElements,
      deepspeed.persistenceThresholdElements,
    ),
    reductions: deepspeedReduceBuckets(backwardOrder, deepspeed.reduceBucketElements),
  };
}
