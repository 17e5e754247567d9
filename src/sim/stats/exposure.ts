import { isCommunication, streamIndex, type Task, type TaskKind } from '../program/types.js';
import type { Trace } from '../program/trace.js';
import type { Topology } from '../network/types.js';

/** Exposed communication of one kind of traffic over one kind of wire, summed over simulated ranks. */
export interface ExposureRow {
  kind: TaskKind;
  /** `network` when the group spans nodes, else the node's intra-node wire. */
  medium: 'nvlink' | 'pcie' | 'network';
  /** Mean over simulated ranks of the time this traffic was in flight while the rank did not compute. */
  exposedS: number;
  /** Share of that time spent in collectives under 1 MiB (latency-bound). */
  smallShare: number;
}

const SMALL_BYTES = 1 << 20;

function mediumOf(t: Task, topology: Topology): ExposureRow['medium'] {
  const gpn = topology.cluster.node.gpusPerNode;
  const g = t.collective!.group;
  const node = Math.floor(g[0] / gpn);
  for (const r of g) if (Math.floor(r / gpn) !== node) return 'network';
  return topology.cluster.node.intra === 'pcie' ? 'pcie' : 'nvlink';
}

/**
 * Attributes each rank's exposed communication to the traffic that caused it: for every
 * communication span, the part during which the rank's compute stream was idle, split evenly among
 * the communication spans in flight at that moment.
 */
export function exposureByTraffic(trace: Trace, topology: Topology): ExposureRow[] {
  const ranks = trace.program.simulatedRanks;
  const compute = new Map<number, [number, number][]>();
  const comm = new Map<number, Task[]>();
  for (const r of ranks) {
    compute.set(r, []);
    comm.set(r, []);
  }
  for (const t of trace.program.tasks) {
    const c = isCommunication(t.kind);
    for (const r of t.ranks) {
      if (!compute.has(r)) continue;
      if (c && t.collective) comm.get(r)!.push(t);
      else if (!c && streamIndex(t.stream) === 0) compute.get(r)!.push([trace.startNs[t.id], trace.endNs[t.id]]);
    }
  }
  const totals = new Map<string, { kind: TaskKind; medium: ExposureRow['medium']; ns: number; smallNs: number }>();
  for (const r of ranks) {
    const busy = [...compute.get(r)!].sort((x, y) => x[0] - y[0]);
    const spans = comm.get(r)!;
    // Sweep the span boundaries in time order, keeping the set of spans in flight.
    const events: [number, number, Task][] = [];
    for (const t of spans) {
      events.push([trace.startNs[t.id], 1, t]);
      events.push([trace.endNs[t.id], -1, t]);
    }
    events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    const active = new Set<Task>();
    let bi = 0;
    for (let i = 0; i < events.length; i++) {
      const [at, delta, t] = events[i];
      if (delta > 0) active.add(t);
      else active.delete(t);
      const next = i + 1 < events.length ? events[i + 1][0] : at;
      if (next <= at || active.size === 0) continue;
      // Idle part of [at, next): subtract the compute intervals that overlap it.
      let idle = next - at;
      while (bi < busy.length && busy[bi][1] <= at) bi++;
      for (let k = bi; k < busy.length && busy[k][0] < next; k++) idle -= Math.max(0, Math.min(next, busy[k][1]) - Math.max(at, busy[k][0]));
      if (idle <= 0) continue;
      const share = idle / active.size;
      for (const x of active) {
        const medium = mediumOf(x, topology);
        const key = `${x.kind}/${medium}`;
        const row = totals.get(key) ?? { kind: x.kind, medium, ns: 0, smallNs: 0 };
        row.ns += share;
        if (x.collective!.bytes < SMALL_BYTES) row.smallNs += share;
        totals.set(key, row);
      }
    }
  }
  return [...totals.values()]
    .map((r) => ({ kind: r.kind, medium: r.medium, exposedS: r.ns / ranks.length / 1e9, smallShare: r.ns > 0 ? r.smallNs / r.ns : 0 }))
    .sort((x, y) => y.exposedS - x.exposedS);
}
