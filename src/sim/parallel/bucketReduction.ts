import { MiB } from '../engine/units.js';
import type { GradBucket } from './buckets.js';
import { lastBackwardOf, stepBackwardEnd, type ReductionGroup } from './reductionGroup.js';

/**
 * The bucketed gradient reduction of ZeRO 0 to 2: ZeRO 0 (PyTorch DDP / Megatron) all-reduces the buckets, in the last
 * micro-batch's backward when `overlap`, else after it; ZeRO 1 reduce-scatters them instead; ZeRO 2 reduce-scatters
 * them in every micro-batch (DeepSpeed reduces at each micro-step). A bucket, overlapped, waits for the compute task
 * that completes its last tensor's gradient. Returns the last communication task.
 */
export function addBucketReduction(g: ReductionGroup, buckets: readonly GradBucket[], overlap: boolean): number {
  const { program, passes, key, ctx } = g.scope;
  const { zero } = ctx.setup.parallel;
  const m = ctx.microBatches;
  const wirePerStored = ctx.precision.wireGradientBytes / ctx.precision.gradientBytes;
  const op = zero === 0 ? 'all_reduce' : 'reduce_scatter';
  const rounds = zero === 2 ? [...Array(m).keys()] : [m - 1];
  let lastComm = -1;
  for (const mb of rounds) {
    for (const bk of buckets) {
      const deps = g.replicas.map((d) => {
        if (!overlap) return mb === m - 1 ? stepBackwardEnd(g, d) : lastBackwardOf(g, d, mb);
        const lastTensor = bk.tensors[bk.tensors.length - 1];
        const rec = passes.get(key(d, g.params.virtualStageOf.get(lastTensor)!, mb, 'B'))!;
        return rec.gradTask![g.t].get(g.params.readyWith.get(lastTensor) ?? lastTensor) ?? rec.last[g.t];
      });
      const label = `${op.replace('_', '-')} bucket ${bk.index} mb${mb} (${(bk.bytes / MiB).toFixed(1)} MiB)`;
      lastComm = program.collective(
        zero === 0 ? 'dp-allreduce' : 'dp-reducescatter',
        label,
        { op, group: g.group, bytes: bk.bytes * wirePerStored, shadowGroups: g.shadowGroups },
        deps,
        mb,
        'comm',
        g.members,
      );
    }
  }
  return lastComm;
}
