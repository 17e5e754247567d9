import type { Dtype, GpuSpec } from '../hardware/types.js';
import type { Block } from '../workload/ops.js';
import { opTimeNs } from '../workload/kernelTime.js';

/** A run of consecutive backward ops that ends where some parameter gradients become complete. */
export interface BackwardSegment {
  durationNs: number;
  flops: number;
  /** Tensors whose gradients are complete at the end of this segment. */
  gradTensors: string[];
  recompute: boolean;
}

/** Timed work of one block for one micro-batch on one rank. */
export interface TimedBlock {
  name: string;
  layer: number;
  forwardNs: number;
  forwardFlops: number;
  backward: BackwardSegment[];
}

/**
 * Times a block's ops on a GPU and groups them into tasks: the forward as one task, the backward
 * cut after every op that completes gradients (so gradient buckets can start at the right moment),
 * with recompute ops as a segment of their own.
 */
export function timeBlocks(blocks: readonly Block[], gpu: GpuSpec, dtype: Dtype): TimedBlock[] {
  return blocks.map((b) => {
    let forwardNs = 0;
    let forwardFlops = 0;
    for (const op of b.forward) {
      forwardNs += opTimeNs(op, gpu, dtype);
      forwardFlops += op.flops;
    }
    const backward: BackwardSegment[] = [];
    let seg: BackwardSegment = { durationNs: 0, flops: 0, gradTensors: [], recompute: false };
    for (const op of b.backward) {
      const isRecompute = op.name.startsWith('recompute.');
      if (seg.durationNs > 0 && seg.recompute !== isRecompute) {
        backward.push(seg);
        seg = { durationNs: 0, flops: 0, gradTensors: [], recompute: isRecompute };
      }
      seg.recompute = isRecompute;
      seg.durationNs += opTimeNs(op, gpu, dtype);
      seg.flops += op.flops;
      if (op.gradParams && op.gradParams.length > 0) {
        seg.gradTensors.push(...op.gradParams);
        backward.push(seg);
        seg = { durationNs: 0, flops: 0, gradTensors: [], recompute: false };
      }
    }
    if (seg.durationNs > 0) backward.push(seg);
    return { name: b.name, layer: b.layer, forwardNs, forwardFlops, backward };
  });
}
