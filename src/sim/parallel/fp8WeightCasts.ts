import { opTimeNs } from '../workload/kernelTime.js';
import { elementwiseOp } from '../workload/ops.js';
import { fp8WeightCastBytes } from '../workload/fp8.js';
import type { ReductionGroup } from './reductionGroup.js';

/**
 * Bytes of one rank's all-gather of its stage's updated weights: every weight in the working type (2 bytes in mixed
 * precision), except that with the FP8 parameter gather the FP8 weights travel as one byte each (Megatron's DDP
 * parameter buffer is uint8 then; distributed_data_parallel.py).
 */
export function weightGatherBytes(g: ReductionGroup): number {
  const { precision, setup } = g.scope.ctx;
  const fp8 = setup.training.fp8?.paramGather ? g.params.fp8WeightElementsPerRank : 0;
  const dense = g.expert ? g.params.expertElementsPerRank : g.params.elementsPerRank - g.params.expertElementsPerRank;
  return (dense - fp8) * precision.elementBytes + fp8;
}

/**
 * FP8 training's once-a-step weight casts on each simulated replica's rank (fp8.ts `fp8WeightCastBytes`), after its
 * optimizer step (`optimizerIds`, one per replica) and, when there is one, the weights' all-gather. Transformer Engine
 * makes them at the next step's first micro-batch; at the end of this one they cost the same time on the same stream.
 */
export function addFp8WeightCasts(
  g: ReductionGroup,
  optimizerIds: readonly number[],
  gather: number | undefined,
): void {
  const { ctx, program, layout } = g.scope;
  const fp8 = ctx.setup.training.fp8;
  const elements = g.params.fp8WeightElementsPerRank;
  if (!fp8 || elements === 0) return;
  const shard = elements / layout.dp;
  const op = elementwiseOp(
    'fp8 weight casts',
    elements,
    1,
    fp8WeightCastBytes(elements, shard, fp8.paramGather, fp8.recipe),
  );
  const gpu = ctx.setup.cluster.node.gpu;
  g.replicas.forEach((d, i) => {
    const rank = layout.rank(g.t, d, g.stage.stage);
    const ns = Math.round(g.scope.speedOf(rank) * opTimeNs(op, gpu, ctx.precision.dtype));
    const deps = gather === undefined ? [optimizerIds[i]] : [optimizerIds[i], gather];
    program.local(rank, 'compute', 'optimizer', 'fp8 weight casts (Transformer Engine, once a step)', ns, deps);
  });
}
