import { OFFLOAD_HOST_GRADIENT_BYTES } from '../memory/memory.js';
import type { StepSetup } from '../setup.js';
import { opTimeNs, optimizerOp } from '../workload/kernelTime.js';
import { stepBackwardEnd, type ReductionGroup } from './reductionGroup.js';

/**
 * Each simulated replica's optimizer step on this group's TP rank, after `deps` (its reduction, tied-embedding sync
 * and outstanding TP collectives): on a 1/dp shard from ZeRO 1 on. With CPU offload the fp32 gradient shard goes to
 * the host, Adam runs there, and the weights come back. Returns one task per replica: its step's last.
 */
export function addOptimizerSteps(g: ReductionGroup, lastComm: number, depsOf: (i: number) => number[]): number[] {
  const { ctx, program, layout } = g.scope;
  const { setup } = ctx;
  // From ZeRO 1 on a 1/dp shard of the dense parameters and a 1/edp shard of the experts' (their own reducing ranks).
  const expert = g.params.expertElementsPerRank;
  const shard =
    setup.parallel.zero >= 1
      ? (g.params.elementsPerRank - expert) / layout.dp + expert / ctx.expertReducingRanks
      : g.params.elementsPerRank;
  return g.replicas.map((d, i) => {
    const rank = layout.rank(g.t, d, g.stage.stage);
    const deps = depsOf(i);
    if (setup.parallel.offload === 'cpu') {
      // On the copy stream nothing orders the copy after backward by itself: without a gradient reduction (dp 1) it
      // waits for the replica's last backward pass.
      return addOffloadedStep(g, rank, shard, lastComm >= 0 ? deps : [...deps, stepBackwardEnd(g, d)]);
    }
    const { mixed, gradientBytes } = ctx.precision;
    const op = optimizerOp(shard, {
      optimizer: setup.training.optimizer,
      precision: mixed ? 'mixed' : 'fp32',
      gradientBytes,
      state: setup.training.optimizerState,
    });
    const ns = Math.round(g.scope.speedOf(rank) * opTimeNs(op, setup.cluster.node.gpu, 'fp32'));
    return program.local(rank, 'compute', 'optimizer', 'optimizer step', ns, deps);
  });
}

/**
 * CPU offload of one rank's step. DeepSpeed casts the gradient shard to fp32 on the GPU before the copy to the host's
 * fp32 buffer (stage_1_and_2.py async_inplace_copy_grad_to_fp32_buffer_from_gpu; stage3.py
 * _offload_grad_partition_at_boundary), and copies the updated weights back in their 16-bit type (step:
 * param_buffer_of_bit16_for_cpu_offload_groups).
 */
function addOffloadedStep(g: ReductionGroup, rank: number, shard: number, ready: number[]): number {
  const { ctx, program } = g.scope;
  const node = ctx.setup.cluster.node;
  const pcie = node.pcieBandwidthGBps;
  const d2h = program.local(
    rank,
    'copy',
    'd2h',
    'fp32 gradient shard to host',
    (shard * OFFLOAD_HOST_GRADIENT_BYTES) / pcie + node.pcieLatencyNs,
    ready,
  );
  const host = program.local(rank, 'copy', 'host-optimizer', 'host Adam (CPU offload)', hostAdamNs(shard, ctx.setup), [
    d2h,
  ]);
  return program.local(
    rank,
    'copy',
    'h2d',
    'weights back to GPU',
    (shard * ctx.precision.elementBytes) / pcie + node.pcieLatencyNs,
    [host],
  );
}

/**
 * Host time of one rank's CPU-Adam update of `shard` parameters: the node's throughput is shared by the processes of
 * all its GPUs, which update their shards at the same time (after the same gradient reduction).
 */
export function hostAdamNs(shard: number, setup: StepSetup): number {
  const node = setup.cluster.node;
  const ranksOnNode = Math.min(
    node.gpusPerNode,
    setup.parallel.tp * setup.parallel.pp * setup.parallel.dp * (setup.parallel.cp ?? 1),
  );
  return ((shard * ranksOnNode) / node.hostAdamParamsPerS) * 1e9;
}
