/**
 * Collective operations, named as nccl-tests names its binaries, and `ep_dispatch`: an expert dispatch or combine as
 * DeepEP runs it (deepEpDispatch.ts), which only a step issues (it needs the model's routing).
 */
export type CollectiveOp =
  'all_reduce' | 'all_gather' | 'reduce_scatter' | 'broadcast' | 'send_recv' | 'all_to_all' | 'ep_dispatch';

/** The operations nccl-tests runs, which `collective --op` takes. */
export type NcclTestsOp = Exclude<CollectiveOp, 'ep_dispatch'>;

export const COLLECTIVE_OPS: readonly NcclTestsOp[] = [
  'all_reduce',
  'all_gather',
  'reduce_scatter',
  'broadcast',
  'send_recv',
  'all_to_all',
];

/**
 * How the collective is carried out. `ring`, `tree` and `nvls` are NCCL's algorithms; `hierarchical`
 * is the two-level scheme (intra-node reduce-scatter, inter-node all-reduce, intra-node all-gather)
 * used by Horovod and BytePS.
 */
export type Algorithm = 'ring' | 'tree' | 'hierarchical' | 'nvls';

export const ALGORITHMS: readonly Algorithm[] = ['ring', 'tree', 'hierarchical', 'nvls'];

/** NCCL's wire protocols: LL (8-byte lines, half of them flags), LL128 (120 of 128 bytes data), Simple. */
export type Protocol = 'LL' | 'LL128' | 'Simple';

export const PROTOCOLS: readonly Protocol[] = ['LL', 'LL128', 'Simple'];

/** Whether each ring step becomes its own set of flows (reference) or the whole transfer one set (fast). */
export type CollectiveMode = 'aggregated' | 'step';

/**
 * One phase of a collective: wait `latencyNs`, then move flows; the phase ends when all flows are done.
 * A phase with `repeat` > 1 runs that many times in sequence (the steps of a ring).
 */
export interface Phase {
  latencyNs: number;
  routes: Int32Array[];
  /** Bytes each flow moves per run of the phase, as a fraction of the collective's size. */
  byteFraction: Float64Array;
  /**
   * How many identical flows (same links, same fraction) entry i stands for, started as one flow of that
   * multiplicity (see FlowNetwork.startFlow).
   */
  count: Int32Array;
  /** Per-flow rate limit (GB/s) from the protocol, Infinity when none. */
  rateCapGBps: number;
  repeat: number;
}

/** A collective turned into flows on the topology, for a given size. */
export interface CollectivePlan {
  op: CollectiveOp;
  algorithm: Algorithm;
  protocol: Protocol;
  bytes: number;
  phases: Phase[];
}
