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
}

/** One pass (forward or backward) through one block, cut into segments around TP collectives. */
export interface PassTemplate {
  segments: Segment[];
  /** Collectives issued after the last segment; whatever runs next waits for them. */
  issueAfter: TpSync[];
}

/**
 * Cuts a pass's ops into compute segments: at every TP collective's issue and need point, after every
 * op that completes gradients (so gradient buckets can start on time), and where recompute starts or
 * stops. Op times come from the GPU model.
 */
export function passTemplate(ops: readonly Op[], syncs: readonly TpSync[], kind: 'forward' | 'backward', gpu: GpuSpec, dtype: Dtype): PassTemplate {
  const n = ops.length;
  const cuts = new Set<number>([0, n]);
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
    for (let i = start; i < end; i++) {
      durationNs += opTimeNs(ops[i], gpu, dtype);
      flops += ops[i].flops;
      if (ops[i].gradParams) gradTensors.push(...ops[i].gradParams!);
    }
    segments.push({
      kind: ops[start].name.startsWith('recompute.') ? 'recompute' : kind,
      durationNs,
      flops,
      gradTensors,
      issueBefore: syncs.filter((s) => Math.max(0, s.afterOp + 1) === start),
      waitFor: syncs.filter((s) => s.neededBy === start),
    });
  }
  return { segments, issueAfter: syncs.filter((s) => s.afterOp + 1 >= n) };
}
