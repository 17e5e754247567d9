import { ParallelLayout } from '../parallel/layout.js';
import type { StepSetup } from '../setup.js';
import type { StageMemory } from './stageMemory.js';

/** Host memory of the fullest node under optimizer offload. */
export interface HostMemory {
  /** Sum of `hostBytes` over the ranks of the fullest node. */
  bytesPerNode: number;
  /** The node's host memory, when its spec states it. */
  capacityBytes?: number;
  /** Whether it fits; undefined when the capacity is not stated. */
  fits?: boolean;
  shortfallBytes: number;
}

/**
 * What optimizer offload puts in each node's host memory: every rank's `hostBytes` (by its pipeline stage, ranks
 * placed as the scenario's layout places them), summed per node; the fullest node against the node's host memory.
 * Undefined without offload.
 */
export function hostMemoryPerNode(setup: StepSetup, stages: readonly StageMemory[]): HostMemory | undefined {
  const par = setup.parallel;
  if (par.offload !== 'cpu') return undefined;
  const layout = new ParallelLayout(par.tp, par.dp, par.pp, par.placement, par.cp ?? 1);
  const perNode = setup.cluster.node.gpusPerNode;
  let bytesPerNode = 0;
  for (let first = 0; first < layout.world; first += perNode) {
    let sum = 0;
    for (let r = first; r < Math.min(first + perNode, layout.world); r++) sum += stages[layout.coords(r).p].hostBytes;
    bytesPerNode = Math.max(bytesPerNode, sum);
  }
  const capacityBytes = setup.cluster.node.hostMemoryBytes;
  if (capacityBytes === undefined) return { bytesPerNode, shortfallBytes: 0 };
  return {
    bytesPerNode,
    capacityBytes,
    fits: bytesPerNode <= capacityBytes,
    shortfallBytes: Math.max(0, bytesPerNode - capacityBytes),
  };
}
