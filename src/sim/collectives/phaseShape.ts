import type { Topology } from '../network/types.js';
import type { CollectiveOp } from './types.js';
import type { HopKind, LatencyShape } from './ncclTuning.js';
import type { GroupLayout } from './groupLayout.js';

/** A plan before it is given a size: phases with per-flow byte fractions and no latency yet. */
export interface PlanShape {
  phases: PhaseShape[];
  /** Channels the plan spreads over (for per-channel protocol caps). */
  channels: number;
}

export interface PhaseShape {
  routes: Int32Array[];
  byteFraction: Float64Array;
  /** Identical flows each entry stands for (see `Phase.count`). */
  count: Int32Array;
  /** Number of ring steps the phase stands for (step mode runs them one by one). */
  steps: number;
  /** The NCCL latency formula this phase pays before its flows start. */
  latency: PhaseLatency;
}

/** Which latency formula of ncclTuning a phase pays. */
export interface PhaseLatency {
  algorithm: 'ring' | 'tree' | 'nvls';
  shape: LatencyShape;
}

/**
 * Collects a phase's flows, merging those with the same links and the same byte fraction into one entry
 * with a count: they start together with the same cap, so max-min fairness gives them one rate and one
 * finish time, and the network runs them as one flow of that multiplicity. On NVSwitch nodes this folds
 * the channels of a ring hop inside a node (the route does not depend on the channel there) into one.
 */
export class PhaseBuilder {
  private readonly routes: Int32Array[] = [];
  private readonly fractions: number[] = [];
  private readonly counts: number[] = [];
  /** Entry index by links and fraction. */
  private readonly index = new Map<string, number>();
  /** @param nics the NICs node-crossing channels use, in turn (`pxnNics`); absent: channel c uses NIC c. */
  constructor(
    private readonly topology: Topology,
    private readonly nics?: readonly number[],
  ) {}
  add(src: number, dst: number, channel: number, fraction: number): void {
    if (src === dst || fraction <= 0) return;
    const gpn = this.topology.cluster.node.gpusPerNode;
    const across = this.nics !== undefined && Math.floor(src / gpn) !== Math.floor(dst / gpn);
    this.addRoute(this.topology.route(src, dst, across ? this.nics![channel % this.nics!.length] : channel), fraction);
  }
  addRoute(route: Int32Array, fraction: number, count = 1): void {
    const key = `${route.join(',')}|${fraction}`;
    const at = this.index.get(key);
    if (at !== undefined) {
      this.counts[at] += count;
      return;
    }
    this.index.set(key, this.routes.length);
    this.routes.push(route);
    this.fractions.push(fraction);
    this.counts.push(count);
  }
  /**
   * A transfer as the load it puts on each link of its route, one single-link flow a link (merged with the others of
   * the same size there): exact for a phase that ends when its most loaded link has drained, with far fewer flows
   * than coupled multi-link ones (allToAll.ts, deepEpDispatch.ts).
   */
  addLinkLoads(route: Int32Array, fraction: number): void {
    for (let k = 0; k < route.length; k++) this.addRoute(route.subarray(k, k + 1), fraction);
  }
  build(steps: number, latency: PhaseLatency): PhaseShape {
    return {
      routes: this.routes,
      byteFraction: Float64Array.from(this.fractions),
      count: Int32Array.from(this.counts),
      steps,
      latency,
    };
  }
}

function intraHop(topology: Topology): HopKind {
  return topology.cluster.node.intra === 'pcie' ? 'pci' : 'nvlink';
}

/** The latency formula a phase over `layout` pays: its op, ranks, nodes and intra-node hop. */
export function latencyOf(
  topology: Topology,
  algorithm: PhaseLatency['algorithm'],
  op: CollectiveOp,
  layout: GroupLayout,
): PhaseLatency {
  let ranks = 0;
  for (const m of layout.members) ranks += m.length;
  return { algorithm, shape: { op, ranks, nodes: layout.nodes.length, intraHop: intraHop(topology) } };
}
