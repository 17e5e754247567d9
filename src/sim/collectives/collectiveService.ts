import { Simulator } from '../engine/simulator.js';
import { FlowNetwork } from '../network/flowNetwork.js';
import type { Topology } from '../network/types.js';
import type { NodeSpec } from '../hardware/types.js';
import { NODE_PRESETS } from '../hardware/nodes.js';
import { busBandwidthFactor } from './busBandwidth.js';
import { CollectiveRun } from './collectiveRun.js';
import { groupLayout } from './groupLayout.js';
import { RankGroups } from './rankGroups.js';
import { findTable, tableTimeNs, type MeasuredCollectiveTable } from './measuredTable.js';
import {
  gpuGeneration,
  llMaxBusBandwidthGBps,
  protocolEfficiency,
  ringSimplePlateauFactor,
  treeCorrectionFactor,
  treeModelBytesPerNs,
  type GpuGeneration,
} from './ncclTuning.js';
import { phaseLatenciesNs, phasesFor, planShape, type PlanShape } from './plans.js';
import type { Algorithm, CollectiveMode, CollectiveOp, Phase, Protocol } from './types.js';
import type { ExpertRouting } from '../workload/routeSpread.js';

/** Settings a scenario can give for collectives. */
export interface CollectiveConfig {
  mode: CollectiveMode;
  /** Force an algorithm for all-reduce (others fall back to ring where it does not apply). */
  allReduceAlgorithm: Algorithm | 'auto';
  protocol: Protocol | 'auto';
  /**
   * Skip identical ring steps in step mode instead of simulating each (exact: see CollectiveRun); on
   * unless false. Off only to measure or check the step-by-step path itself.
   */
  skipRepeats?: boolean;
  /**
   * Measured collectives (nccl-tests tables) of this machine: calls of a table's op over its number of
   * GPUs, all in one node, take the table's time on an idle network (measuredTable.ts).
   */
  measured?: readonly MeasuredCollectiveTable[];
  /** How the model routes its tokens to experts: the loads of `ep_dispatch` (DeepEP) depend on it. */
  expertRouting?: ExpertRouting;
}

export const DEFAULT_COLLECTIVE_CONFIG: CollectiveConfig = {
  mode: 'aggregated',
  allReduceAlgorithm: 'auto',
  protocol: 'auto',
};

/** The algorithm and protocol chosen for one call, with the idle-network time predicted for it. */
export interface CollectiveChoice {
  algorithm: Algorithm;
  protocol: Protocol;
  predictedNs: number;
}

interface GroupInfo {
  shapes: Map<string, PlanShape>;
  nsPerByte: Map<string, number>;
  /** Choices already made for (op, bytes): collectives repeat with the same sizes. */
  choices: Map<string, CollectiveChoice>;
  /** Phases already built for (op, bytes, algorithm, protocol), shared by every run of that call. */
  phases: Map<string, Phase[]>;
  nodes: number;
  maxPerNode: number;
}

/** Algorithms NCCL would consider for this op and group (tuning.cc / enqueue.cc). */
export function candidateAlgorithms(topology: Topology, op: CollectiveOp, nodes: number, ranks: number): Algorithm[] {
  if (op !== 'all_reduce') return ['ring'];
  const list: Algorithm[] = ['ring'];
  if (nodes > 1) list.push('tree');
  const node = topology.cluster.node;
  if (nodes === 1 && node.nvls && node.intra === 'nvswitch' && ranks > 2) list.push('nvls');
  return list;
}

/**
 * Why NVLS (NVLink SHARP, in-switch reduction) cannot run on `node`, or undefined when it can: it needs
 * third-generation NVSwitch (HGX H100/H200 and later), which the node presets mark `nvls`.
 */
export function nvlsUnavailable(node: NodeSpec): string | undefined {
  if (node.nvls && node.intra === 'nvswitch') return undefined;
  const withNvls = Object.values(NODE_PRESETS)
    .filter((n) => n.nvls)
    .map((n) => n.name);
  return (
    `nvls needs NVLink SHARP in third-generation NVSwitch, which ${node.name} lacks ` +
    `(nodes with it: ${withNvls.join(', ')}); use ring, tree, hierarchical or auto`
  );
}

/**
 * Turns collective calls into flows on the shared network, choosing algorithm and protocol as NCCL
 * does: the candidate with the lowest latency + size / bandwidth, where bandwidth is what the
 * candidate reaches on the idle simulated topology.
 */
export class CollectiveService {
  /** The groups called, by their ranks (content, not array identity), and per group id its choices and phases. */
  private readonly groups = new RankGroups<ArrayLike<number>>();
  private readonly infos: GroupInfo[] = [];
  private readonly generation: GpuGeneration;
  private idle?: { sim: Simulator; net: FlowNetwork };

  constructor(
    private readonly topology: Topology,
    private readonly config: CollectiveConfig = DEFAULT_COLLECTIVE_CONFIG,
  ) {
    this.generation = gpuGeneration(topology.cluster.node.gpu);
  }

  /** Picks algorithm and protocol for `bytes` over `group`; one object per (group's ranks, op, bytes). */
  choose(op: CollectiveOp, group: ArrayLike<number>, bytes: number): CollectiveChoice {
    const info = this.info(group);
    const cacheKey = `${op}/${bytes}`;
    const cached = info.choices.get(cacheKey);
    if (cached) return cached;
    const forced =
      op === 'all_reduce' && this.config.allReduceAlgorithm !== 'auto' ? this.config.allReduceAlgorithm : undefined;
    const algorithms = forced ? [forced] : candidateAlgorithms(this.topology, op, info.nodes, group.length);
    let best: CollectiveChoice | undefined;
    for (const algorithm of algorithms) {
      for (const protocol of this.protocols(algorithm, op)) {
        const predictedNs = this.predictNs(op, algorithm, protocol, group, bytes);
        if (!best || predictedNs < best.predictedNs) best = { algorithm, protocol, predictedNs };
      }
    }
    info.choices.set(cacheKey, best as CollectiveChoice);
    return best as CollectiveChoice;
  }

  /**
   * Time of one algorithm/protocol for `bytes` as NCCL's tuner rates it, in ns: the latency terms plus
   * the bytes at the bandwidth the flows reach on the idle simulated network, except for the tree,
   * which NCCL rates from the ring's bandwidth with its own factors (treeModelBytesPerNs) whatever the
   * tree would really reach.
   */
  predictNs(
    op: CollectiveOp,
    algorithm: Algorithm,
    protocol: Protocol,
    group: ArrayLike<number>,
    bytes: number,
  ): number {
    const shape = this.shape(op, algorithm, group);
    const latency = latencySumNs(shape, protocol) * this.latencyFactor(op, algorithm, protocol, group, shape, bytes);
    if (algorithm === 'tree' && op === 'all_reduce') {
      const ringBusBytesPerNs =
        busBandwidthFactor(op, group.length) /
        this.nsPerByte(op, 'ring', 'Simple', group, this.shape(op, 'ring', group));
      return (
        latency +
        bytes / treeModelBytesPerNs(protocol, ringBusBytesPerNs, this.info(group).nodes, this.generation, bytes)
      );
    }
    return latency + bytes * this.nsPerByte(op, algorithm, protocol, group, shape);
  }

  /** Time of one call on the idle network, simulated flow by flow (latency included), in ns. */
  simulateIdleNs(
    op: CollectiveOp,
    group: ArrayLike<number>,
    bytes: number,
    choice = this.choose(op, group, bytes),
  ): number {
    return this.runIdle(this.phases(op, group, bytes, choice), bytes);
  }

  /** Runs phases alone on this service's private idle network and returns the time they took, in ns. */
  private runIdle(phases: Phase[], bytes: number): number {
    return this.simulateIdleTogetherNs([{ phases, bytes }]).firstNs;
  }

  /**
   * Runs several calls' phases started at one instant (in the order given) on this service's private idle
   * network (made once and reused: every probe leaves it empty again): when the first call is done and
   * when the last of all is, in ns from their start.
   */
  simulateIdleTogetherNs(runs: readonly { phases: Phase[]; bytes: number }[]): { firstNs: number; lastNs: number } {
    if (!this.idle) {
      const sim = new Simulator();
      this.idle = {
        sim,
        net: new FlowNetwork(
          sim,
          this.topology.links.map((l) => l.bandwidthGBps),
        ),
      };
    }
    const { sim, net } = this.idle;
    const start = sim.now;
    let firstAt = -1;
    let lastAt = start;
    runs.forEach((r, i) => {
      const listener = {
        onCollectiveDone: () => (i === 0 ? (firstAt = sim.now) : (lastAt = Math.max(lastAt, sim.now))),
      };
      new CollectiveRun(sim, net, r.phases, r.bytes, listener, 0, this.skipRepeats).start();
    });
    sim.run();
    return { firstNs: firstAt - start, lastNs: Math.max(firstAt, lastAt) - start };
  }

  /**
   * Runnable phases of a call with the chosen (or given) algorithm and protocol. Built once per distinct
   * call and then shared (a step makes the same calls thousands of times): do not modify them.
   */
  phases(op: CollectiveOp, group: ArrayLike<number>, bytes: number, choice = this.choose(op, group, bytes)): Phase[] {
    const info = this.info(group);
    const key = `${op}/${bytes}/${choice.algorithm}/${choice.protocol}`;
    let phases = info.phases.get(key);
    if (!phases) {
      const shape = this.shape(op, choice.algorithm, group);
      const limits = this.protocolLimits(choice.algorithm, choice.protocol, group, shape);
      // tuning.cc's correction for trees at medium sizes is there because real trees reach less than
      // the model there; the flows carry it too.
      let efficiency =
        limits.efficiency * (choice.algorithm === 'tree' ? treeCorrectionFactor(choice.protocol, bytes) : 1);
      let factor = this.latencyFactor(op, choice.algorithm, choice.protocol, group, shape, bytes);
      const measuredNs = this.measuredNs(op, group, bytes);
      if (measuredNs !== undefined) {
        // Meet the measured idle time: the latency terms take what the flows' transfer leaves, or, where
        // the transfer alone is already slower than measured, the flows run faster and pay no latency.
        // nsPerByte was probed at the protocol's efficiency alone: rescale to the one these flows carry.
        const transferNs =
          (bytes * this.nsPerByte(op, choice.algorithm, choice.protocol, group, shape) * limits.efficiency) /
          efficiency;
        const latencyNs = latencySumNs(shape, choice.protocol);
        if (measuredNs >= transferNs && latencyNs > 0) factor = (measuredNs - transferNs) / latencyNs;
        else {
          factor = 0;
          efficiency *= transferNs / measuredNs;
        }
      }
      phases = phasesFor(shape, choice.protocol, factor, efficiency, limits.capGBps, this.config.mode);
      info.phases.set(key, phases);
    }
    return phases;
  }

  /**
   * The idle time of a call by the measured table for its op and group size, when the group lies in one
   * node and such a table was given; below the table's smallest size, the model's own time scaled to meet
   * the table there. Undefined when no table applies.
   */
  private measuredNs(op: CollectiveOp, group: ArrayLike<number>, bytes: number): number | undefined {
    const table = findTable(this.config.measured, op, group.length);
    if (!table || this.info(group).nodes !== 1) return undefined;
    const t = tableTimeNs(table, bytes);
    if (t !== undefined) return t;
    // Inside one node the automatic candidates (ring, NVLS) are predicted exactly as their flows run; a
    // forced tree is rated by NCCL's model, close enough to scale below the table.
    const first = table.points[0];
    return (this.choose(op, group, bytes).predictedNs * first.timeNs) / this.choose(op, group, first.bytes).predictedNs;
  }

  /** Whether runs of this service's collectives skip identical repetitions (CollectiveRun's `skipRepeats`). */
  get skipRepeats(): boolean {
    return this.config.skipRepeats !== false;
  }

  private protocols(algorithm: Algorithm, op: CollectiveOp): Protocol[] {
    if (algorithm === 'nvls' || algorithm === 'hierarchical') return ['Simple'];
    // NCCL's point-to-point operations, which an all-to-all is made of, run Simple, and LL only below
    // NCCL_P2P_LL_THRESHOLD (16 KiB a peer; never LL128): an expert dispatch's megabytes a peer are far above it.
    if ((op === 'all_to_all' || op === 'ep_dispatch') && this.config.protocol === 'auto') return ['Simple'];
    if (this.config.protocol !== 'auto') return [this.config.protocol];
    // tuning.cc (v2.19-v2.23, "Enable LL128 by default only on Volta/Ampere/Hopper+NVLink"): LL128 is on by default
    // only where the graph's intra-node path is NVLink (typeIntra <= PATH_NVB); a PCIe-only node runs LL and Simple
    // unless NCCL_PROTO forces it (a forced protocol above).
    if (this.topology.cluster.node.intra === 'pcie') return ['LL', 'Simple'];
    return ['LL', 'LL128', 'Simple'];
  }

  private protocolLimits(
    algorithm: Algorithm,
    protocol: Protocol,
    group: ArrayLike<number>,
    shape: PlanShape,
  ): { efficiency: number; capGBps: number } {
    const info = this.info(group);
    let efficiency = protocolEfficiency(protocol, info.maxPerNode);
    // tuning.cc: tree bandwidth is taken at 92% of the ring's before protocol factors.
    if (algorithm === 'tree') efficiency *= 0.92;
    const capGBps = protocol === 'LL' ? llMaxBusBandwidthGBps(this.generation, info.nodes) / shape.channels : Infinity;
    return { efficiency, capGBps };
  }

  /* eslint-disable-next-line max-params -- NCCL's latency model takes op, algorithm, protocol, ranks, nodes and
     channels together (ncclTuning.ts) */
  private latencyFactor(
    op: CollectiveOp,
    algorithm: Algorithm,
    protocol: Protocol,
    group: ArrayLike<number>,
    shape: PlanShape,
    bytes: number,
  ): number {
    const info = this.info(group);
    const plateau =
      op === 'all_reduce' &&
      algorithm === 'ring' &&
      protocol === 'Simple' &&
      info.nodes > 1 &&
      bytes / (shape.channels * group.length) >= 64;
    return plateau ? ringSimplePlateauFactor(this.generation) : 1;
  }

  private info(group: ArrayLike<number>): GroupInfo {
    const id = this.groups.idOf(group);
    let info = this.infos[id];
    if (!info) {
      const layout = groupLayout(group, this.topology.cluster.node.gpusPerNode);
      info = {
        shapes: new Map(),
        nsPerByte: new Map(),
        choices: new Map(),
        phases: new Map(),
        nodes: layout.nodes.length,
        maxPerNode: layout.maxPerNode,
      };
      this.infos[id] = info;
    }
    return info;
  }

  private shape(op: CollectiveOp, algorithm: Algorithm, group: ArrayLike<number>): PlanShape {
    const info = this.info(group);
    const key = `${op}/${algorithm}`;
    let shape = info.shapes.get(key);
    if (!shape) {
      shape = planShape(this.topology, op, algorithm, group, this.config.expertRouting);
      info.shapes.set(key, shape);
    }
    return shape;
  }

  /** Transfer time per byte on the idle network (no latency), measured by running the flows once. */
  private nsPerByte(
    op: CollectiveOp,
    algorithm: Algorithm,
    protocol: Protocol,
    group: ArrayLike<number>,
    shape: PlanShape,
  ): number {
    const info = this.info(group);
    const key = `${op}/${algorithm}/${protocol}`;
    let v = info.nsPerByte.get(key);
    if (v === undefined) {
      const probeBytes = 1 << 30;
      const { efficiency, capGBps } = this.protocolLimits(algorithm, protocol, group, shape);
      const phases = phasesFor(shape, protocol, 0, efficiency, capGBps, 'aggregated');
      v = this.runIdle(phases, probeBytes) / probeBytes;
      info.nsPerByte.set(key, v);
    }
    return v;
  }
}

/** The latency terms of all of a plan's phases together, ns. */
function latencySumNs(shape: PlanShape, protocol: Protocol): number {
  return phaseLatenciesNs(shape, protocol).reduce((a, b) => a + b, 0);
}

/** Runs phases alone on a fresh, idle copy of the network and returns the time taken, in ns. */
export function runPhasesIdleNs(topology: Topology, phases: Phase[], bytes: number): number {
  const sim = new Simulator();
  const net = new FlowNetwork(
    sim,
    topology.links.map((l) => l.bandwidthGBps),
  );
  let doneAt = -1;
  new CollectiveRun(sim, net, phases, bytes, { onCollectiveDone: () => (doneAt = sim.now) }, 0).start();
  sim.run();
  return doneAt;
}
