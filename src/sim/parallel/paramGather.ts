import type { Program } from '../program/types.js';
import type { GradBucket } from './buckets.js';
import type { PassKey, PassRecord, StagePlan } from './stepCompiler.js';

/**
 * Megatron's `--overlap-param-gather` (Megatron-Core DistributedDataParallelConfig.overlap_param_gather; NeMo's
 * overlap_param_sync): the distributed optimizer's all-gather of the updated weights moves from the end of the step to
 * the start of the next, bucket by bucket in forward order, and each layer's first forward waits only for the buckets
 * that hold its weights (megatron/core/distributed/distributed_data_parallel.py, the forward pre-hook that waits for a
 * bucket's all-gather and dispatches the next). In the steady state one simulated step starts with those gathers: the
 * first layer's bucket is exposed, the rest run under the forward (and, with a pipeline, under the fill).
 */
export interface ParamGatherInput {
  program: Program;
  stage: StagePlan;
  passes: Map<string, PassRecord>;
  key: PassKey;
  pp: number;
  /** The TP rank (index among the simulated ones) whose data-parallel group gathers. */
  t: number;
  replicas: readonly number[];
  /** The stage's gradient buckets, in backward (reduction) order. */
  buckets: readonly GradBucket[];
  /** Tensor name → its layer (−1 embeddings, `layers` final norm and head). */
  layerOf: ReadonlyMap<string, number>;
  /** Bytes of a weight element and of a gradient element (a bucket's size is in gradient bytes). */
  weightBytes: number;
  gradientBytes: number;
  group: readonly number[];
  members: readonly number[];
  shadowGroups?: readonly (readonly number[])[];
}

/** Issues the gathers on the members' comm streams (before the step's reductions) and gates each layer's first forward. */
export function addParamGathers(x: ParamGatherInput): void {
  const { program, stage, passes, key, pp, t, replicas } = x;
  // Which forward blocks (first micro-batch, every chunk of the stage) hold each layer.
  const firstOf = new Map<number, number[]>();
  for (let c = 0; c < stage.chunks.length; c++) {
    for (const d of replicas) {
      const rec = passes.get(key(d, c * pp + stage.stage, 0, 'F'));
      for (const b of rec?.blocks ?? []) {
        const list = firstOf.get(b.block.layer) ?? [];
        list.push(b.first[t]);
        firstOf.set(b.block.layer, list);
      }
    }
  }
  for (const bk of [...x.buckets].reverse()) {
    const label = `all-gather updated weights, bucket ${bk.index} (overlapped with the forward)`;
    const bytes = (bk.bytes / x.gradientBytes) * x.weightBytes;
    const id = program.collective('dp-allgather', label, { op: 'all_gather', group: x.group, bytes, shadowGroups: x.shadowGroups }, [], 0, 'comm', x.members);
    const layers = new Set(bk.tensors.map((name) => x.layerOf.get(name)));
    for (const layer of layers) for (const task of firstOf.get(layer ?? NaN) ?? []) program.addDep(task, id);
  }
}
