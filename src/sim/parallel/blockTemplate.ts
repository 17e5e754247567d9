import type { Dtype, GpuSpec } from '../hardware/types.js';
import type { TaskKind } from '../program/types.js';
import { opTimeNs } from '../workload/kernelTime.js';
import type { Op } from '../workload/ops.js';
import type { TpSync } from './tpSync.js';

/** A run of consecutive ops of one pass through a block that becomes one compute task. */
export interface Segment {
  kind: TaskKind;
  durationNs: number;
  flops: number;
  /** Parameter tensors whose gradients are complete when this segment ends. */
  gradTensors: string[];
  /** TP collectives issued right before this segment starts (after the previous one ends). */
  issueBefore: TpSync[];
  /** TP collectives this segment must wait for. */
  waitFor: TpSync[];
  /** Host time to issue this segment's ops (and the collectives issued right before it), ns. */
  hostNs: number;
  /**
   * Host time, from when the host starts issuing this segment, before which the segment may not start
   * on the GPU so that none of its kernels starts before it was issued: max over ops j of (host time to
   * issue ops 0..j) − (GPU time of ops 0..j−1). With the segment starting at max(GPU free, host start +
   * lead) and running its GPU time, it ends exactly when the op-by-op host/GPU pipeline would.
   */
  hostLeadNs: number;
  /** The host waits for the GPU to drain before issuing this segment (a blocking copy in its first op). */
  syncBefore: boolean;
}

/** One pass (forward or backward) through one block, cut into segments around TP collectives. */
export interface PassTemplate {
  segments: Segment[];
  /** Collectives issued after the last segment; whatever runs next waits for them. */
  issueAfter: TpSync[];
  /** Whether the ops carry host costs (a framework is modelled): the compiler then adds host tasks. */
  hostModelled: boolean;
  /** Host time of the collectives in `issueAfter`, ns. */
  hostAfterNs: number;
}

/**
 * Cuts a pass's ops into compute segments: at every TP collective's issue and need point, after every
 * op that completes gradients (so gradient buckets can start on time), where recompute starts or
 * stops, and before every op at which the host waits for the GPU. Op times come from the GPU model;
 * when ops carry host costs (`Op.hostNs`) the launch overhead is the host's, not the kernel's, and
 * each TP collective costs the host `collectiveHostNs`.
 */
/* eslint-disable-next-line max-params -- a template depends on the ops, their syncs, direction, GPU, dtype and host
 * cost, and on nothing else */
export function passTemplate(
  ops: readonly Op[],
  syncs: readonly TpSync[],
  kind: 'forward' | 'backward',
  gpu: GpuSpec,
  dtype: Dtype,
  collectiveHostNs = 0,
): PassTemplate {
  const n = ops.length;
  const hostModelled = ops.some((op) => op.hostNs !== undefined);
  const cuts = new Set<number>([0, n]);
  ops.forEach((op, i) => {
    if (op.hostSync) cuts.add(i);
  });
  for (const s of syncs) {
    cuts.add(Math.max(0, Math.min(n, s.afterOp + 1)));
    cuts.add(Math.max(0, Math.min(n, s.neededBy)));
  }
  ops.forEach((op, i) => {
    if (op.gradParams && op.gradParams.length > 0) cuts.add(i + 1);
    const rec = op.name.startsWith('recompute.');
    if (i > 0 && rec !== ops[i - 1].name.startsWith('recompute.')) cuts.add(i);
  });
  const bounds = [...cuts].sort((a, b) => a - b);
  const segments: Segment[] = [];
  for (let k = 0; k + 1 < bounds.length; k++) {
    const start = bounds[k];
    const end = bounds[k + 1];
    if (end <= start) continue;
    let durationNs = 0;
    let flops = 0;
    const gradTensors: string[] = [];
    const issueBefore = syncs.filter((s) => Math.max(0, s.afterOp + 1) === start);
    let hostNs = hostModelled ? issueBefore.length * collectiveHostNs : 0;
    let hostLeadNs = 0;
    for (let i = start; i < end; i++) {
      const gpuNs = opTimeNs(ops[i], gpu, dtype, { launch: ops[i].hostNs === undefined });
      hostNs += ops[i].hostNs ?? 0;
      hostLeadNs = Math.max(hostLeadNs, hostNs - durationNs);
      durationNs += gpuNs;
      flops += ops[i].flops;
      if (ops[i].gradParams) gradTensors.push(...ops[i].gradParams!);
    }
    segments.push({
      kind: ops[start].name.startsWith('recompute.') ? 'recompute' : kind,
      durationNs,
      flops,
      gradTensors,
      issueBefore,
      waitFor: syncs.filter((s) => s.neededBy === start),
      hostNs,
      hostLeadNs,
      syncBefore: ops[start].hostSync === true,
    });
  }
  const issueAfter = syncs.filter((s) => s.afterOp + 1 >= n);
  return { segments, issueAfter, hostModelled, hostAfterNs: hostModelled ? issueAfter.length * collectiveHostNs : 0 };
}
