import type { Program } from '../program/types.js';
import type { ParallelLayout } from './layout.js';
import type { TpSync } from './tpSync.js';

/**
 * Context parallelism's exchanges as the step compiler instantiates them: which ranks each simulated member exchanges
 * with (`cpRing`), the tasks of one exchange (`issueCpExchange`), and, in full fidelity, the waits across ranks
 * (`RingWaits`).
 */

/**
 * The context-parallel ring of the simulated `members` (one TP group of grid row d in stage s): each member's send to
 * its successor, and as shadows the sends of the ring's ranks nobody simulates (the other TP ranks and context-parallel
 * ranks of this row, in symmetric mode the other replicas too). Shadows are attached to the first simulated row only.
 *
 * In full fidelity every rank of a ring is simulated and waits for its predecessor's send (`waits`), so the ring runs
 * at the pace of its slowest hop. In symmetric mode only a member is simulated and it waits for the send it issues
 * itself; all ranks of a ring move in step, so that send stands for the slowest hop of the member's ring (the first
 * one that leaves its node, if any), and the member's own hop rides along as a shadow. Otherwise a ring that crosses
 * nodes would run at NVLink pace while the unwaited shadow sends piled up on the NICs.
 */
/* eslint-disable-next-line max-params -- the ring of one replica and stage: debt, to take the compile scope as
 * passBuilder.ts does */
export function cpRing(
  layout: ParallelLayout,
  d: number,
  s: number,
  members: readonly number[],
  simulated: ReadonlySet<number>,
  shadowFilter: (g: readonly number[]) => boolean,
  gpusPerNode: number,
  waits?: RingWaits,
): CpRing {
  const hop = (rank: number) => {
    const c = layout.coords(rank);
    return layout.pair(rank, layout.cpNext(c.t, c.d, s));
  };
  const node = (rank: number) => Math.floor(rank / gpusPerNode);
  const crosses = (g: readonly number[]) => node(g[0]) !== node(g[1]);
  // Members whose own hop rides along as a shadow, standing in for a slower one.
  const standIns = new Set<number>();
  const pairs = members.map((rank) => {
    const own = hop(rank);
    if (waits || crosses(own)) return own;
    const c = layout.coords(rank);
    const slowest = layout.cpGroup(c.t, c.d, s).map(hop).find(crosses);
    if (slowest) standIns.add(rank);
    return slowest ?? own;
  });
  const sending = new Set(pairs.map((g) => g[0]));
  const shadows: (readonly number[])[] = [];
  if (d === 0) {
    for (let e = 0; e < layout.dp; e++) {
      for (let t = 0; t < layout.tp; t++) {
        const rank = layout.rank(t, e, s);
        if (sending.has(rank) || (simulated.has(rank) && !standIns.has(rank))) continue;
        const g = hop(rank);
        if (shadowFilter(g)) shadows.push(g);
      }
    }
  }
  const groups = members.map((rank) => {
    const c = layout.coords(rank);
    return layout.cpGroup(c.t, c.d, s);
  });
  const groupShadows: (readonly number[])[] = [];
  if (d === 0 && !waits) {
    for (let e = 0; e < layout.dp; e += layout.cp) {
      for (let t = 0; t < layout.tp; t++) {
        const g = layout.cpGroup(t, e, s);
        if (!g.some((r) => simulated.has(r)) && shadowFilter(g)) groupShadows.push(g);
      }
    }
  }
  const share = waits ? 1 / layout.cp : 1;
  return {
    pairs,
    shadows,
    groups,
    share,
    groupShadows,
    ...(waits ? { waited: (label, sync, sends, consumers) => waits.record(s, d, label, sync, sends, consumers) } : {}),
  };
}

/** The context-parallel ring as the simulated members of one TP group see it. */
export interface CpRing {
  /** Per member: [member, the next rank of its ring] (ParallelLayout.pair). */
  pairs: readonly (readonly number[])[];
  /** The same exchange of the ranks not simulated, as shadow flows. */
  shadows: readonly (readonly number[])[];
  /** Per member: its whole context-parallel group, for the collective types (all_gather, a2a). */
  groups: readonly (readonly number[])[];
  /**
   * The share of a group collective's bytes one member's task moves: every member of a group issues one in full
   * fidelity (1/cp each); in symmetric mode the one simulated member stands for the group (1).
   */
  share: number;
  /** The groups with no simulated rank, whose collectives run alongside as shadows (symmetric mode). */
  groupShadows: readonly (readonly number[])[];
  /**
   * Notes that the `consumers` (one compute task per member) used the block that `sends` passed on (`sync` of pass
   * `label`); only when the whole ring is simulated.
   */
  waited?(label: string, sync: TpSync, sends: readonly number[], consumers: readonly number[]): void;
}

/**
 * Where a rank's kernel really waits for its predecessor's send. A member's next kernel waits for its own send; when
 * every rank of a ring is simulated (full fidelity), `link` also makes it wait for the block the previous rank of
 * the ring sent it, so that ranks that drift apart (compute jitter) meet at every exchange; after a gather or an
 * all-to-all (each member's share of the group's collective) it waits for every member's share.
 */
export class RingWaits {
  private readonly byKey = new Map<
    string,
    Map<number, { sends: readonly number[]; consumers: readonly number[]; gather: boolean }>
  >();
  /** The exchanges of a template, numbered: one pass holds several with the same label (forward and recompute). */
  private readonly syncIds = new Map<TpSync, number>();
  constructor(private readonly cp: number) {}
  /* eslint-disable-next-line max-params -- the ring of one replica and stage: debt, to take the compile scope as
   * passBuilder.ts does */
  record(
    stage: number,
    d: number,
    label: string,
    sync: TpSync,
    sends: readonly number[],
    consumers: readonly number[],
  ): void {
    let id = this.syncIds.get(sync);
    if (id === undefined) this.syncIds.set(sync, (id = this.syncIds.size));
    const k = `${stage}/${label}/${id}`;
    let m = this.byKey.get(k);
    if (!m) this.byKey.set(k, (m = new Map()));
    // A gather or all-to-all needs every rank's block, a ring step its predecessor's.
    m.set(d, { sends, consumers, gather: sync.op !== 'send_recv' });
  }
  link(program: Program): void {
    for (const byD of this.byKey.values()) {
      for (const [d, mine] of byD) {
        const c = d % this.cp;
        const others = mine.gather
          ? Array.from({ length: this.cp - 1 }, (_, k) => byD.get(d - c + ((c + 1 + k) % this.cp)))
          : [byD.get(d - c + ((c + this.cp - 1) % this.cp))];
        for (const other of others) {
          if (!other || other === mine) continue;
          mine.consumers.forEach((task, i) => program.addDep(task, other.sends[i]));
        }
      }
    }
  }
}

/**
 * The tasks of one context-parallel exchange of a pass, one per simulated member, each after the member's last compute
 * task: a ring step sends the member's block to its ring's next rank (`ring.pairs`), with the unsimulated ranks' sends
 * as shadows; a gather or all-to-all is the member's share of a collective over its context-parallel group
 * (`ring.groups`, `ring.share`), with the unsimulated groups' collectives as shadows.
 */
/* eslint-disable-next-line max-params -- the ring of one replica and stage: debt, to take the compile scope as
 * passBuilder.ts does */
export function issueCpExchange(
  program: Program,
  sync: TpSync,
  label: string,
  members: readonly number[],
  ring: CpRing,
  lastCompute: readonly number[],
  microBatch: number,
): number[] {
  const collective = sync.op !== 'send_recv';
  const shadows = collective ? ring.groupShadows : ring.shadows;
  return members.map((rank, i) => {
    const work = {
      op: sync.op,
      group: collective ? ring.groups[i] : ring.pairs[i],
      bytes: collective ? sync.bytes * ring.share : sync.bytes,
      shadowGroups: i === 0 && shadows.length > 0 ? shadows : undefined,
    };
    return program.collective(
      'cp-exchange',
      label,
      work,
      lastCompute[i] !== undefined ? [lastCompute[i]] : [],
      microBatch,
      'cp',
      program.rankList(rank),
    );
  });
}
