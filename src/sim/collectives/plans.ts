import type { Topology } from '../network/types.js';
import type { Algorithm, CollectiveMode, CollectiveOp, Phase, Protocol } from './types.js';
import type { ExpertRouting } from '../workload/routeSpread.js';
import { deepEpDispatchShape } from './deepEpDispatch.js';
import { collectiveLatencyUs } from './ncclTuning.js';
import { groupLayout, type GroupLayout } from './groupLayout.js';
import { nodeRings } from './meshRing.js';
import { latencyOf, PhaseBuilder, type PhaseShape, type PlanShape } from './phaseShape.js';
import { allToAllShape } from './allToAll.js';

export type { PhaseLatency, PhaseShape, PlanShape } from './phaseShape.js';

/**
 * Channels a collective over this layout uses: one per NIC across nodes (per usable NIC, `nics` from `pxnNics`, where
 * PXN through members leaves some out); inside one node, each ring the node offers run in both directions.
 */
export function channelCount(topology: Topology, layout: GroupLayout, nics: readonly number[] | undefined): number {
  if (layout.nodes.length > 1) return nics?.length ?? Math.max(1, topology.cluster.node.nicsPerNode);
  return 2 * nodeRings(topology.cluster.node, layout.members[0]).length;
}

/**
 * The NICs a group's node-crossing channels use on NVSwitch nodes, when not all of them (one channel each): PXN hands a
 * GPU's data over NVLink to the GPU next to the channel's NIC, and that GPU must be a rank of the communicator (NCCL's
 * proxy runs on it), so a NIC whose GPU is not in the group on every node is left out. A data-parallel group of one GPU
 * per node (tp 8) then keeps to its own rail, and a GPU alone on its node sends through its own NIC. Where no NIC's
 * own GPU is in the group (4 NICs for 8 GPUs, a group of the GPUs beside them), the NICs under the PCIe switches of
 * its GPUs, as NCCL reaches them directly; only where none is either do the channels keep every NIC. Undefined when
 * every NIC is used.
 */
export function pxnNics(topology: Topology, layout: GroupLayout): number[] | undefined {
  const node = topology.cluster.node;
  if (layout.nodes.length < 2 || node.intra !== 'nvswitch') return undefined;
  const G = node.gpusPerNode;
  const N = Math.max(1, node.nicsPerNode);
  const locals = layout.members.map((m) => m.map((g) => g % G));
  const all = [...Array(N).keys()];
  let usable = all.filter((r) => locals.every((l) => l.includes(topology.nicProxy(r))));
  if (usable.length === 0) usable = all.filter((r) => locals.every((l) => l.some((g) => topology.nearNic(g, r))));
  return usable.length > 0 && usable.length < N ? usable : undefined;
}

/**
 * Where channel `c`'s ring enters and leaves a node without PXN (no NVSwitch to hand data to the NIC's own GPU): NCCL's
 * ring search keeps the GPUs that feed and drain the channel's NIC under that NIC's PCIe switch, or its traffic crosses
 * the host bridges. Of the node's rings (all over the same members), starting from the channel's own (`first`), the
 * first with a rotation whose first GPU (entry) and last (exit) are both near the NIC, the one nearest the `plain`
 * rotation; else the channel's own ring as it was: one side crosses a host bridge whatever the rotation, and the plain
 * one keeps the channels spread over the GPUs.
 */
function nicLocalRing(
  topology: Topology,
  rings: number[][],
  first: number,
  c: number,
  plain: number,
): { m: number[]; r: number } {
  const G = topology.cluster.node.gpusPerNode;
  const k = rings[first].length;
  const near = (g: number) => topology.nearNic(g % G, c);
  for (let j = 0; j < rings.length; j++) {
    const m = rings[(first + j) % rings.length];
    const rs = [...Array(k).keys()].filter((r) => near(m[r]) && near(m[(r - 1 + k) % k]));
    if (rs.length > 0) return { m, r: rs.reduce((a, b) => ((b - plain + k) % k < (a - plain + k) % k ? b : a)) };
  }
  return { m: rings[first], r: plain };
}

/** The ring that channel `c` follows over the layout (see DESIGN §5). */
function channelRing(topology: Topology, layout: GroupLayout, c: number): number[] {
  const order: number[] = [];
  const reverse = layout.nodes.length === 1 && c % 2 === 1;
  const single = layout.nodes.length === 1;
  const node = topology.cluster.node;
  const viaNic = !single && node.intra !== 'nvswitch';
  for (const members of layout.members) {
    const rings = nodeRings(node, members);
    const first = (single ? Math.floor(c / 2) : c) % rings.length;
    const k = members.length;
    const plain = (single ? Math.floor(c / (2 * rings.length)) : c) % k;
    const { m, r } = viaNic ? nicLocalRing(topology, rings, first, c, plain) : { m: rings[first], r: plain };
    // Across nodes on an NVLink mesh, a channel beyond the node's link-disjoint rings runs its ring the other way, on
    // the links' other direction (NVLink is full duplex), entering and leaving through the same two GPUs.
    const back = !single && node.intra === 'nvlink-mesh' && k >= 3 && Math.floor(c / rings.length) % 2 === 1;
    for (let i = 0; i < k; i++)
      order.push(reverse ? m[(r - i + k) % k] : back ? m[(r - 1 - i + 2 * k) % k] : m[(i + r) % k]);
  }
  return order;
}

/* eslint-disable-next-line max-params -- a ring phase is fixed by its topology, ranks, order, bytes, steps and
 * protocol together; the plan cache keys on them */
function ringPhase(
  topology: Topology,
  layout: GroupLayout,
  nics: number[] | undefined,
  channels: number,
  op: CollectiveOp,
  perEdgeFraction: number,
  steps: number,
  openRing = false,
): PhaseShape {
  const b = new PhaseBuilder(topology, nics);
  for (let c = 0; c < channels; c++) {
    const ring = channelRing(topology, layout, c);
    const n = ring.length;
    for (let i = 0; i < (openRing ? n - 1 : n); i++) b.add(ring[i], ring[(i + 1) % n], c, perEdgeFraction / channels);
  }
  return b.build(steps, latencyOf(topology, 'ring', op, layout));
}

/** Ring all-reduce / all-gather / reduce-scatter / broadcast (Patarasuk & Yuan 2009; NCCL). */
function ringShape(topology: Topology, op: CollectiveOp, group: ArrayLike<number>): PlanShape {
  const layout = groupLayout(group, topology.cluster.node.gpusPerNode);
  const n = group.length;
  const nics = pxnNics(topology, layout);
  const channels = channelCount(topology, layout, nics);
  if (op === 'all_reduce')
    return { phases: [ringPhase(topology, layout, nics, channels, op, (2 * (n - 1)) / n, 2 * (n - 1))], channels };
  if (op === 'broadcast') return { phases: [ringPhase(topology, layout, nics, channels, op, 1, 1, true)], channels };
  return { phases: [ringPhase(topology, layout, nics, channels, op, (n - 1) / n, n - 1)], channels };
}

/**
 * NCCL's double binary tree (Sanders et al. 2009): each channel carries its share of the buffer up a
 * chain inside each node and a binary tree across nodes (reduce) and back down (broadcast), both
 * pipelined, so up and down flows run together. Even channels use one tree, odd channels the
 * mirrored one, so a node that is interior in one tree is a leaf in the other.
 */
function treeShape(topology: Topology, group: ArrayLike<number>): PlanShape {
  const layout = groupLayout(group, topology.cluster.node.gpusPerNode);
  const nics = pxnNics(topology, layout);
  const channels = channelCount(topology, layout, nics);
  const nn = layout.nodes.length;
  const b = new PhaseBuilder(topology, nics);
  for (let c = 0; c < channels; c++) {
    const f = 1 / channels;
    const roots: number[] = [];
    for (const m of layout.members) {
      const k = m.length;
      const chain = [...Array(k).keys()].map((i) => m[(i + c) % k]);
      roots.push(chain[0]);
      for (let i = 0; i + 1 < k; i++) {
        b.add(chain[i + 1], chain[i], c, f);
        b.add(chain[i], chain[i + 1], c, f);
      }
    }
    // NCCL's double binary tree: connectTrees doubles the channels so that every channel (and so every NIC) carries
    // both trees, each with half its data. A node interior in one tree is a leaf in the other, which evens the load
    // per NIC; one tree per channel would leave the NICs of interior nodes with three flows of the whole share.
    for (const mirrored of [false, true]) {
      for (let i = 1; i < nn; i++) {
        const parent = (i - 1) >> 1;
        const child = mirrored ? nn - 1 - i : i;
        const par = mirrored ? nn - 1 - parent : parent;
        b.add(roots[child], roots[par], c, f / 2);
        b.add(roots[par], roots[child], c, f / 2);
      }
    }
  }
  return { phases: [b.build(1, latencyOf(topology, 'tree', 'all_reduce', layout))], channels };
}

/** Intra-node reduce-scatter, inter-node all-reduce per local rank, intra-node all-gather. */
function hierarchicalShape(topology: Topology, group: ArrayLike<number>): PlanShape {
  const layout = groupLayout(group, topology.cluster.node.gpusPerNode);
  const k = layout.maxPerNode;
  const nn = layout.nodes.length;
  for (const m of layout.members) {
    if (m.length !== k)
      throw new RangeError('hierarchical all-reduce needs the same number of group members on every node');
  }
  const phases: PhaseShape[] = [];
  const local = (m: number[]): GroupLayout => ({ nodes: [0], members: [m], maxPerNode: m.length });
  if (k > 1) {
    const rs = new PhaseBuilder(topology);
    for (const m of layout.members) {
      // Inside one node: no NIC, so no PXN.
      const ph = ringPhase(
        topology,
        local(m),
        undefined,
        channelCount(topology, local(m), undefined),
        'reduce_scatter',
        (k - 1) / k,
        k - 1,
      );
      ph.routes.forEach((r, i) => rs.addRoute(r, ph.byteFraction[i], ph.count[i]));
    }
    phases.push(rs.build(k - 1, latencyOf(topology, 'ring', 'reduce_scatter', local(layout.members[0]))));
  }
  if (nn > 1) {
    // Local rank j's ring across the nodes takes NIC j, or with PXN through members the usable NICs in turn.
    const ar = new PhaseBuilder(topology, pxnNics(topology, layout));
    for (let j = 0; j < k; j++) {
      const ring = layout.members.map((m) => m[j]);
      for (let i = 0; i < nn; i++) ar.add(ring[i], ring[(i + 1) % nn], j, (2 * (nn - 1)) / nn / k);
    }
    const across: GroupLayout = {
      nodes: layout.nodes,
      members: layout.nodes.map((_, i) => [layout.members[i][0]]),
      maxPerNode: 1,
    };
    phases.push(ar.build(2 * (nn - 1), latencyOf(topology, 'ring', 'all_reduce', across)));
  }
  if (k > 1) {
    const rs = phases[0];
    const ag = latencyOf(topology, 'ring', 'all_gather', local(layout.members[0]));
    phases.push({ ...rs, byteFraction: Float64Array.from(rs.byteFraction), latency: ag });
  }
  return { phases, channels: k };
}

/**
 * NVLink SHARP (third-generation NVSwitch): each GPU pushes its buffer into the switch, which
 * reduces and multicasts the result back, so every GPU sends and receives the buffer once.
 * `efficiency` is the fraction of the NVLink bandwidth that NVLS reaches.
 */
function nvlsShape(topology: Topology, group: ArrayLike<number>, efficiency: number): PlanShape {
  const b = new PhaseBuilder(topology);
  const n = group.length;
  for (let i = 0; i < n; i++) {
    const g = group[i];
    const other = group[(i + 1) % n];
    const out = topology.route(g, other, 0);
    const inn = topology.route(other, g, 0);
    b.addRoute(out.subarray(0, 1), 1 / efficiency);
    b.addRoute(inn.subarray(inn.length - 1), 1 / efficiency);
  }
  const layout = groupLayout(group, topology.cluster.node.gpusPerNode);
  return { phases: [b.build(1, latencyOf(topology, 'nvls', 'all_reduce', layout))], channels: 1 };
}

/** One transfer from group[0] to group[1]; the channel picks the NIC next to the sender. */
function sendRecvShape(topology: Topology, group: ArrayLike<number>): PlanShape {
  if (group.length !== 2) throw new RangeError('send_recv needs a group of exactly two ranks: [sender, receiver]');
  const b = new PhaseBuilder(topology);
  const gpn = topology.cluster.node.gpusPerNode;
  b.add(group[0], group[1], group[0] % gpn, 1);
  const layout = groupLayout(group, gpn);
  return { phases: [b.build(1, latencyOf(topology, 'ring', 'send_recv', layout))], channels: 1 };
}

/**
 * Fraction of NVLink bandwidth NVLS all-reduce reaches: 8×H100 algbw ≈ 274 GB/s against ≈ 365 GB/s ring busbw
 * (nccl#1455); a node measured otherwise sets its own (`NodeSpec.nvlsEfficiency`).
 */
export const NVLS_EFFICIENCY = 0.75;

/** Builds the size-independent shape of a collective. */
export function planShape(
  topology: Topology,
  op: CollectiveOp,
  algorithm: Algorithm,
  group: ArrayLike<number>,
  routing?: ExpertRouting,
): PlanShape {
  if (op === 'send_recv') return sendRecvShape(topology, group);
  if (op === 'all_to_all') return allToAllShape(topology, group);
  if (op === 'ep_dispatch') {
    if (!routing) throw new RangeError('ep_dispatch needs the expert routing (CollectiveConfig.expertRouting)');
    return deepEpDispatchShape(topology, group, routing);
  }
  switch (algorithm) {
    case 'ring':
      return ringShape(topology, op, group);
    case 'tree':
      return treeShape(topology, group);
    case 'hierarchical':
      return hierarchicalShape(topology, group);
    case 'nvls':
      return nvlsShape(topology, group, topology.cluster.node.nvlsEfficiency ?? NVLS_EFFICIENCY);
  }
}

/** Latency of each phase of a shape under a protocol, in ns. */
export function phaseLatenciesNs(shape: PlanShape, protocol: Protocol): number[] {
  return shape.phases.map((p) => collectiveLatencyUs(p.latency.algorithm, protocol, p.latency.shape) * 1e3);
}

/**
 * Turns a shape into runnable phases: each phase pays its latency (× `latencyFactor`), and its flows
 * carry their fraction of the buffer divided by the protocol's efficiency, capped per flow. In step
 * mode a phase of s ring steps runs s times with 1/s of the bytes and of the latency each time.
 */
/* eslint-disable-next-line max-params -- a ring phase is fixed by its topology, ranks, order, bytes, steps and
 * protocol together; the plan cache keys on them */
export function phasesFor(
  shape: PlanShape,
  protocol: Protocol,
  latencyFactor: number,
  efficiency: number,
  rateCapGBps: number,
  mode: CollectiveMode,
): Phase[] {
  const latencies = phaseLatenciesNs(shape, protocol);
  return shape.phases.map((p, k) => {
    const repeat = mode === 'step' && p.steps > 1 ? p.steps : 1;
    const byteFraction = new Float64Array(p.byteFraction.length);
    for (let i = 0; i < byteFraction.length; i++) byteFraction[i] = p.byteFraction[i] / efficiency / repeat;
    return {
      latencyNs: (latencies[k] * latencyFactor) / repeat,
      routes: p.routes,
      byteFraction,
      count: p.count,
      rateCapGBps,
      repeat,
    };
  });
}
