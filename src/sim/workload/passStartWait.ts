import { hostCost, type FrameworkSpec } from './framework.js';
import { GET_BATCH_PIPE_CALLS } from './megatronOps.js';

/** Where a pass sits in the pipeline: forward or backward, through virtual stage `virtualStage` of `virtualStages`. */
export interface PassPosition {
  kind: 'F' | 'B';
  virtualStage: number;
  virtualStages: number;
  tp: number;
}

/**
 * The framework's host wait at the start of a pass: DeepSpeed's partitioned pipeline tensors with TP
 * (`partitionedPipeSync`: a non-first stage waits for the activations before a forward, a non-last stage for the
 * gradients before a backward), and a last stage that does not also hold the embedding loading its own batch before
 * each forward (`lastStageLoadsBatch`: `next(data_iterator)` and `get_batch_pipe`, whose blocking copies queue behind
 * the activations' receive). Returns the host ns of work after the wait (the load's), or undefined when the host does
 * not wait. The load's host work is put after the wait, though its first calls precede its first blocking copy: an
 * upper bound by a few calls.
 */
export function passStartHostNs(fw: FrameworkSpec | undefined, pass: PassPosition): number | undefined {
  const { kind, virtualStage: vs, virtualStages: stages, tp } = pass;
  if (!fw || stages === 1) return undefined;
  const partitioned = fw.partitionedPipeSync && tp > 1 && (kind === 'F' ? vs > 0 : vs < stages - 1);
  const ownLoad = fw.lastStageLoadsBatch && kind === 'F' && vs === stages - 1;
  if (!partitioned && !ownLoad) return undefined;
  return ownLoad ? hostCost(fw, 1 + GET_BATCH_PIPE_CALLS.plain, GET_BATCH_PIPE_CALLS.collectives) : 0;
}
