import type { CollectiveChoice, CollectiveService } from '../collectives/collectiveService.js';
import type { CollectiveOp, Phase } from '../collectives/types.js';
import type { Program } from './types.js';
import type { RankGroups } from '../collectives/rankGroups.js';

/** One distinct collective call (group, op, bytes, algorithm): its flows and the links they use. */
export interface CollectivePlanEntry {
  op: CollectiveOp;
  group: readonly number[];
  bytes: number;
  choice: CollectiveChoice;
  phases: Phase[];
  /** Distinct links any flow of the call crosses. */
  links: Int32Array;
  /** Position in `CollectivePlans.entries`. */
  index: number;
  /** Dense id of `group` among the program's groups (`Program.groups`, by content). */
  groupId: number;
  /** Time of the call on an idle network, ns; computed when first needed. */
  idleNs?: number;
}

/**
 * Plans every collective of a program once per distinct (group, op, bytes, choice) instead of once per
 * task: a step repeats the same few collectives tens of thousands of times, and choosing an algorithm
 * and building its phases per call was a measurable share of a large run. Shadow groups use the
 * choice of the collective they shadow.
 *
 * It also records the distinct links of every call (for `IdleWindows`) and finds the groups whose
 * links are private: no flow of any other group ever crosses them. A shadow on such a group meets no
 * flow anybody waits for, so the executor may leave it out.
 */
export class CollectivePlans {
  /** Per collective task id: its plan (undefined for local tasks). */
  readonly primary: (CollectivePlanEntry | undefined)[];
  /** Per collective task id with shadow groups: the plans of its shadows. */
  readonly shadows: (CollectivePlanEntry[] | undefined)[];
  /** Per collective task id with shadow groups: the shadows that run as flows (those not on private links). */
  readonly runShadows: (CollectivePlanEntry[] | undefined)[];
  /** Per group id: 1 when the group's links carry no other group's flows. */
  readonly privateGroup: Uint8Array;
  /** Every distinct call, once. */
  readonly entries: CollectivePlanEntry[] = [];
  /** group id → op → bytes → plan of the call on that group (with the algorithm `choose` picks). */
  private readonly calls = new Map<number, Map<CollectiveOp, Map<number, CollectivePlanEntry>>>();
  /** group id → choice (one object per primary call, see `call`) → plan of that call on the group. */
  private readonly byGroup = new Map<number, Map<CollectiveChoice, CollectivePlanEntry>>();
  private readonly groups: RankGroups;
  private readonly marks = new LinkMarks();
  private readonly composites = new Map<
    CollectivePlanEntry,
    Map<CollectivePlanEntry[], { ownNs: number; allNs: number }>
  >();
  /** The service's setting, followed by every run of these plans. */
  readonly skipRepeats: boolean;
  private readonly shadowLists = new Map<
    readonly (readonly number[])[],
    Map<CollectivePlanEntry, CollectivePlanEntry[]>
  >();

  /** `pruneShadows`: leave out shadows on private links (the shadow-pruning shortcut, shortcuts.ts). */
  constructor(
    program: Program,
    private readonly collectives: CollectiveService,
    pruneShadows = true,
  ) {
    this.skipRepeats = collectives.skipRepeats;
    this.groups = program.groups;
    const n = program.tasks.length;
    this.primary = new Array(n);
    this.shadows = new Array(n);
    for (const t of program.tasks) {
      const c = t.collective;
      if (!c) continue;
      const e = this.call(c.op, c.group, c.bytes);
      this.primary[t.id] = e;
      if (c.shadowGroups && c.shadowGroups.length > 0) this.shadows[t.id] = this.shadowEntries(e, c.shadowGroups);
    }
    this.privateGroup = this.findPrivateGroups();
    // Unordered transfers of one pair may well overlap each other; keep them as flows from the start.
    for (const t of program.tasks) if (!t.ordered && t.collective) this.privateGroup[this.primary[t.id]!.groupId] = 0;
    // A shadow on private links meets no flow anybody waits for: it can be left out.
    this.runShadows = pruneShadows ? this.prunedShadows() : this.shadows;
  }

  /** Per task, its shadows that are not on private links (undefined when none is left). */
  private prunedShadows(): (CollectivePlanEntry[] | undefined)[] {
    const n = this.shadows.length;
    const runShadows: (CollectivePlanEntry[] | undefined)[] = new Array(n);
    const kept = new Map<CollectivePlanEntry[], CollectivePlanEntry[] | undefined>();
    for (let i = 0; i < n; i++) {
      const sh = this.shadows[i];
      if (!sh) continue;
      if (!kept.has(sh)) {
        const list = sh.filter((e) => this.privateGroup[e.groupId] === 0);
        kept.set(sh, list.length > 0 ? list : undefined);
      }
      runShadows[i] = kept.get(sh);
    }
    return runShadows;
  }

  /**
   * Idle-network times of a call run together with its shadows (as the executor starts them: the call,
   * then each shadow, at one instant): when the call itself is done and when the last shadow is, ns.
   * Simulated once per distinct (call, shadows).
   */
  compositeNs(e: CollectivePlanEntry, shadows: CollectivePlanEntry[]): { ownNs: number; allNs: number } {
    let byShadows = this.composites.get(e);
    if (!byShadows) this.composites.set(e, (byShadows = new Map()));
    let r = byShadows.get(shadows);
    if (!r) {
      const { firstNs, lastNs } = this.collectives.simulateIdleTogetherNs([e, ...shadows]);
      r = { ownNs: firstNs, allNs: lastNs };
      byShadows.set(shadows, r);
    }
    return r;
  }

  /** Idle-network time of a planned call, ns (simulated once per distinct call). */
  idleNs(e: CollectivePlanEntry): number {
    e.idleNs ??= this.collectives.simulateIdleNs(e.op, e.group, e.bytes, e.choice);
    return e.idleNs;
  }

  /** The plan of a call, with the algorithm and protocol `CollectiveService.choose` picks for it. */
  private call(op: CollectiveOp, group: readonly number[], bytes: number): CollectivePlanEntry {
    const groupId = this.groups.idOf(group);
    let byOp = this.calls.get(groupId);
    if (!byOp) this.calls.set(groupId, (byOp = new Map()));
    let byBytes = byOp.get(op);
    if (!byBytes) byOp.set(op, (byBytes = new Map()));
    let e = byBytes.get(bytes);
    if (!e) byBytes.set(bytes, (e = this.entry(op, group, bytes, this.collectives.choose(op, group, bytes))));
    return e;
  }

  private entry(
    op: CollectiveOp,
    group: readonly number[],
    bytes: number,
    choice: CollectiveChoice,
  ): CollectivePlanEntry {
    const groupId = this.groups.idOf(group);
    let perGroup = this.byGroup.get(groupId);
    if (!perGroup) this.byGroup.set(groupId, (perGroup = new Map()));
    // `choose` returns one object per (group, op, bytes), so a choice stands for the call it was made for.
    let e = perGroup.get(choice);
    if (!e) {
      const phases = this.collectives.phases(op, group, bytes, choice);
      e = { op, group, bytes, choice, phases, links: this.distinctLinks(phases), groupId, index: this.entries.length };
      perGroup.set(choice, e);
      this.entries.push(e);
    }
    return e;
  }

  /** Plans of the shadows of call `main`: the same op and size, with `main`'s algorithm. */
  private shadowEntries(main: CollectivePlanEntry, groups: readonly (readonly number[])[]): CollectivePlanEntry[] {
    let perList = this.shadowLists.get(groups);
    if (!perList) this.shadowLists.set(groups, (perList = new Map()));
    let list = perList.get(main);
    if (!list) perList.set(main, (list = groups.map((g) => this.entry(main.op, g, main.bytes, main.choice))));
    return list;
  }

  private distinctLinks(phases: readonly Phase[]): Int32Array {
    this.marks.next();
    const out: number[] = [];
    for (const p of phases)
      for (const r of p.routes) for (let k = 0; k < r.length; k++) if (this.marks.mark(r[k])) out.push(r[k]);
    return Int32Array.from(out);
  }

  /** A group is private when every link its calls use is used by no other group's calls. */
  private findPrivateGroups(): Uint8Array {
    let links = 0;
    for (const e of this.entries) for (const l of e.links) links = Math.max(links, l + 1);
    const UNUSED = -1;
    const SHARED = -2;
    const owner = new Int32Array(links).fill(UNUSED);
    for (const e of this.entries) {
      for (const l of e.links) {
        const o = owner[l];
        if (o === UNUSED) owner[l] = e.groupId;
        else if (o !== e.groupId) owner[l] = SHARED;
      }
    }
    const priv = new Uint8Array(this.groups.size).fill(1);
    for (const e of this.entries) for (const l of e.links) if (owner[l] !== e.groupId) priv[e.groupId] = 0;
    return priv;
  }
}

/** Marks links with a stamp per use, so finding distinct links needs no set per call. */
class LinkMarks {
  private stamp = new Int32Array(1024);
  private epoch = 0;
  /** Starts a new round; every link counts as unmarked again. */
  next(): void {
    this.epoch++;
  }
  /** Marks `link`; returns false when it was marked already this round. */
  mark(link: number): boolean {
    if (link >= this.stamp.length) {
      const grown = new Int32Array(Math.max(link + 1, 2 * this.stamp.length));
      grown.set(this.stamp);
      this.stamp = grown;
    }
    if (this.stamp[link] === this.epoch) return false;
    this.stamp[link] = this.epoch;
    return true;
  }
}
