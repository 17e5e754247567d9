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
 * communication span (collectives, transfers, and copies to and from the host, which go over PCIe), the part during
 * which the rank's compute stream was idle, split evenly among the communication spans in flight at that moment.
 */
// eslint-disable-next-line max-lines-per-function -- one sweep over the trace; debt: to split
export function exposureByTraffic(trace: Trace, topology: Topology): ExposureRow[] {
  const { program, startNs, endNs } = trace;
  const ranks = program.simulatedRanks;
  // Per simulated rank (by slot): its compute task ids and communication task ids.
  const slot = new Int32Array(program.rankCount).fill(-1);
  ranks.forEach((r, i) => (slot[r] = i));
  const compute: number[][] = ranks.map(() => []);
  const comm: number[][] = ranks.map(() => []);
  for (const t of program.tasks) {
    const c = isCommunication(t.kind);
    const onCompute = !c && streamIndex(t.stream) === 0;
    // Communication is the collectives and transfers over the links, and the copies to and from the host (CPU
    // offload), which run on a rank's copy stream over its PCIe link: every span the breakdown counts.
    if (!onCompute && !c) continue;
    for (const r of t.ranks) {
      const s = slot[r];
      if (s < 0) continue;
      (onCompute ? compute : comm)[s].push(t.id);
    }
  }
  // Traffic rows by (kind, medium), created in the order they first get time (as ties sort by it).
  const mediums = new Map<readonly number[], ExposureRow['medium']>();
  type Row = { kind: TaskKind; medium: ExposureRow['medium']; ns: number; smallNs: number };
  const rows = new Map<string, Row>();
  const rowOf: (Row | undefined)[] = new Array(program.tasks.length).fill(undefined);
  const row = (id: number): Row => {
    let r = rowOf[id];
    if (r) return r;
    const t = program.tasks[id];
    let medium: ExposureRow['medium'] | undefined = t.collective ? mediums.get(t.collective.group) : 'pcie';
    if (!medium) mediums.set(t.collective!.group, (medium = mediumOf(t, topology)));
    const key = `${t.kind}/${medium}`;
    r = rows.get(key);
    if (!r) rows.set(key, (r = { kind: t.kind, medium, ns: 0, smallNs: 0 }));
    rowOf[id] = r;
    return r;
  };
  for (let s = 0; s < ranks.length; s++) {
    const busy = compute[s].sort((x, y) => startNs[x] - startNs[y]);
    const spans = comm[s];
    // Sweep the span boundaries in time order (ends before starts at one instant), keeping the spans
    // in flight. Event k < n is the start of spans[k], k >= n the end of spans[k - n].
    const n = spans.length;
    const order = Array.from({ length: 2 * n }, (_, k) => k);
    const at = (k: number) => (k < n ? startNs[spans[k]] : endNs[spans[k - n]]);
    order.sort((x, y) => at(x) - at(y) || (x < n ? 1 : -1) - (y < n ? 1 : -1));
    const active = new Set<number>();
    let bi = 0;
    for (let i = 0; i < order.length; i++) {
      const k = order[i];
      const now = at(k);
      if (k < n) active.add(spans[k]);
      else active.delete(spans[k - n]);
      const next = i + 1 < order.length ? at(order[i + 1]) : now;
      if (next <= now || active.size === 0) continue;
      // Idle part of [now, next): subtract the compute intervals that overlap it.
      let idle = next - now;
      while (bi < busy.length && endNs[busy[bi]] <= now) bi++;
      for (let j = bi; j < busy.length && startNs[busy[j]] < next; j++)
        idle -= Math.max(0, Math.min(next, endNs[busy[j]]) - Math.max(now, startNs[busy[j]]));
      if (idle <= 0) continue;
      const share = idle / active.size;
      for (const id of active) {
        const r = row(id);
        r.ns += share;
        const bytes = program.tasks[id].collective?.bytes;
        if (bytes !== undefined && bytes < SMALL_BYTES) r.smallNs += share;
      }
    }
  }
  return [...rows.values()]
    .map((r) => ({
      kind: r.kind,
      medium: r.medium,
      exposedS: r.ns / ranks.length / 1e9,
      smallShare: r.ns > 0 ? r.smallNs / r.ns : 0,
    }))
    .sort((x, y) => y.exposedS - x.exposedS);
}
