import type { Program } from '../program/types.js';
import type { GradBucket } from './buckets.js';
import type { PassKey, PassRecord, StagePlan } from './stepTypes.js';

/**
 * Megatron's `--overlap-param-gather` (Megatron-Core DistributedDataParallelConfig.overlap_param_gather; NeMo's
 * overlap_param_sync): the distributed optimizer's all-gather of the updated weights moves from the end of the step to
 * the start of the next, bucket by bucket in forward order, and each layer's first forward waits for the buckets that
 * hold its weights (megatron/core/distributed/distributed_data_parallel.py: the forward pre-hook waits for a bucket's
 * all-gather and dispatches the next). When the gathers start depends on `align_param_gather` (arguments.py):
 * - with the interleaved schedule (aligned) every stage launches its gathers at the start of the step together
 *   (training.py sets param_sync_func), so they run under the first forwards and, on later stages, the fill;
 * - without it (Megatron turns alignment off for a non-interleaved schedule, pp 1 included) each stage launches them as
 *   it needs them: the first when its first forward is ready to start (on a later stage: when the activations have
 *   arrived), each next one when the forward reaches the layer that waits for the one before.
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
  /** Gathers launched together at the step's start (aligned, interleaved schedule) rather than one by one as needed. */
  aligned: boolean;
}

/**
 * Issues the gathers on the members' comm streams (before the step's reductions) and gates each layer's first forward.
 */
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
  // Not aligned: a gather is launched when the forward is about to start the layer that waits for the previous one
  // (the first: when the stage's first forward is), i.e. on that layer's first task's other dependencies.
  const startOf = (tasks: readonly number[]) => [...new Set(tasks.flatMap((task) => program.tasks[task].deps))];
  let launchAt: number[] | undefined;
  for (const bk of [...x.buckets].reverse()) {
    const layers = [...new Set(bk.tensors.map((name) => x.layerOf.get(name) ?? NaN))].sort((a, b) => a - b);
    const earliest = firstOf.get(layers[0]) ?? [];
    const deps = x.aligned ? [] : (launchAt ?? startOf(earliest));
    const label = `all-gather updated weights, bucket ${bk.index} (overlapped with the forward)`;
    const bytes = (bk.bytes / x.gradientBytes) * x.weightBytes;
    const id = program.collective(
      'dp-allgather',
      label,
      { op: 'all_gather', group: x.group, bytes, shadowGroups: x.shadowGroups },
      deps,
      0,
      'comm',
      x.members,
    );
    for (const layer of layers) for (const task of firstOf.get(layer) ?? []) program.addDep(task, id);
    // The next bucket goes out when this one's first layer starts: after its gather and whatever else it waits for.
    launchAt = startOf(earliest);
  }
}
