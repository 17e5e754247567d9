import type { CollectivePlanEntry, CollectivePlans } from './collectivePlans.js';
import { streamIndex, STREAMS, type Program } from './types.js';
import type { StreamBounds } from './streamBounds.js';
import type { CollectiveListener } from '../collectives/collectiveRun.js';

/**
 * Decides, when a collective starts, whether it may run as one timed event of its idle-network time
 * instead of flows. That is exact when no other flow crosses its links while it runs. The links of a
 * tensor-parallel group are shared with other traffic only now and then (the gradient all-reduce of
 * the last micro-batch enters the node over them), so the check is made per call, against the tasks
 * that could put flows on those links ("touching" tasks):
 *
 * - no flows crossing those links are in flight (shadow flows included: they may outlive their task),
 *   nor do the call's own shadow flows cross them, and
 * - for each stream queue of touching tasks, the next one cannot start before the call would end: it
 *   waits for the tasks ahead of it in its stream and for all its dependencies, and a task that has
 *   not ended ends no earlier than its stream allows (`StreamBounds`). Later tasks of a queue start
 *   after its head.
 *
 * A group whose links unordered tasks (pipeline sends) touch is never run this way.
 */
export class IdleWindows implements CollectiveListener {
  /** Candidate groups touched by task i: touchGroup[touchStart[i] .. touchStart[i + 1]); touchQueue: that group's queue holding i. */
  private readonly touchStart: Int32Array;
  private readonly touchGroup: Int32Array;
  private readonly touchQueue: Int32Array;
  /** Per group: its queues of touching tasks (program order), with a cursor at the first not started. */
  private readonly queues: { ids: Int32Array; pos: number }[][];
  /** Per group: runs (a task's own flows, or one of its shadows') now in flight that cross its links. */
  private readonly running: Int32Array;
  /** Per plan entry (by `index`): the candidate groups its flows cross. */
  private readonly runTouch: Int32Array[];
  private readonly idleRunning: Int32Array;
  private readonly candidate: Uint8Array;
  /** Per task: 1 when its shadows cross its own group's links. */
  private readonly shadowed: Uint8Array;

  constructor(
    private readonly program: Program,
    private readonly plans: CollectivePlans,
    private readonly startNs: Float64Array,
    private readonly endNs: Float64Array,
    private readonly bounds: StreamBounds,
  ) {
    const groups = plans.privateGroup.length;
    // Candidates: groups with calls of their own; which of them own each link.
    let linkCount = 0;
    for (const e of plans.entries) for (const l of e.links) linkCount = Math.max(linkCount, l + 1);
    const owners: (number[] | undefined)[] = new Array(linkCount).fill(undefined);
    const candidate = new Uint8Array(groups);
    const seen = new Set<CollectivePlanEntry>();
    for (const e of plans.primary) {
      if (!e || seen.has(e)) continue;
      seen.add(e);
      candidate[e.groupId] = 1;
      for (const l of e.links) {
        const list = owners[l];
        if (!list) owners[l] = [e.groupId];
        else if (!list.includes(e.groupId)) list.push(e.groupId);
      }
    }
    const NONE: number[] = [];
    const linkOwners = { get: (l: number) => owners[l] ?? NONE };
    // Groups each task's flows (its own and its shadows') cross, once per distinct (call, shadows).
    const tasks = program.tasks;
    const n = tasks.length;
    const touched: number[][] = new Array(n);
    const memo = new Map<CollectivePlanEntry, Map<CollectivePlanEntry[] | undefined, number[]>>();
    const scratch = new Set<number>();
    const crossesOwn = new Map<CollectivePlanEntry[], Set<number>>();
    this.shadowed = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const p = plans.primary[i];
      if (!p) continue;
      const sh = plans.shadows[i];
      let byShadows = memo.get(p);
      if (!byShadows) memo.set(p, (byShadows = new Map()));
      let list = byShadows.get(sh);
      if (!list) {
        scratch.clear();
        for (const l of p.links) for (const g of linkOwners.get(l) ?? []) scratch.add(g);
        for (const e of sh ?? []) for (const l of e.links) for (const g of linkOwners.get(l) ?? []) scratch.add(g);
        byShadows.set(sh, (list = [...scratch]));
      }
      if (sh) {
        // A call whose own shadows cross its group's links never sees an idle network.
        let groupsOfShadows = crossesOwn.get(sh);
        if (!groupsOfShadows) {
          groupsOfShadows = new Set();
          for (const e of sh) for (const l of e.links) for (const g of linkOwners.get(l) ?? []) groupsOfShadows.add(g);
          crossesOwn.set(sh, groupsOfShadows);
        }
        if (groupsOfShadows.has(p.groupId)) this.shadowed[i] = 1;
      }
      if (list.length === 0) continue;
      touched[i] = list;
      // Unordered transfers of one pair may overlap each other and start in any order.
      if (!tasks[i].ordered) for (const g of list) candidate[g] = 0;
    }
    this.candidate = candidate;
    // Only groups that may run on idle time need watching.
    const kept = new Map<number[], number[]>();
    for (let i = 0; i < n; i++) {
      const list = touched[i];
      if (!list) continue;
      let k = kept.get(list);
      if (!k) kept.set(list, (k = list.filter((g) => candidate[g] === 1)));
      touched[i] = k;
    }
    const queueKeys: Map<number, number>[] = Array.from({ length: groups }, () => new Map());
    const queueLists: number[][][] = Array.from({ length: groups }, () => []);
    this.touchStart = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) this.touchStart[i + 1] = this.touchStart[i] + (touched[i]?.length ?? 0);
    this.touchGroup = new Int32Array(this.touchStart[n]);
    this.touchQueue = new Int32Array(this.touchStart[n]);
    for (let i = 0; i < n; i++) {
      const list = touched[i];
      if (!list) continue;
      const key = tasks[i].ranks[0] * STREAMS.length + streamIndex(tasks[i].stream);
      list.forEach((g, k) => {
        let q = queueKeys[g].get(key);
        if (q === undefined) {
          queueKeys[g].set(key, (q = queueLists[g].length));
          queueLists[g].push([]);
        }
        queueLists[g][q].push(i);
        this.touchGroup[this.touchStart[i] + k] = g;
        this.touchQueue[this.touchStart[i] + k] = q;
      });
    }
    this.queues = queueLists.map((qs) => qs.map((ids) => ({ ids: Int32Array.from(ids), pos: 0 })));
    this.running = new Int32Array(groups);
    this.idleRunning = new Int32Array(groups);
    // Candidate groups each distinct call's own flows cross (a run holds these while it is in flight).
    this.runTouch = plans.entries.map((e) => {
      scratch.clear();
      for (const l of e.links) for (const g of linkOwners.get(l)) if (candidate[g] === 1) scratch.add(g);
      return Int32Array.from(scratch);
    });
  }

  /**
   * Called as collective `id` starts at `nowNs`; returns whether it runs as a timed event of `idleNs`
   * (then `completed` must follow). Throws when a flow would meet a call running on idle time, which
   * the checks rule out: it means a bug, and the caller's fallback runs everything as flows.
   */
  start(id: number, nowNs: number, idleNs: () => number): boolean {
    const a = this.touchStart[id];
    const b = this.touchStart[id + 1];
    for (let k = a; k < b; k++) if (this.idleRunning[this.touchGroup[k]] > 0) throw new IdleOverlap();
    const own = this.plans.primary[id]!.groupId;
    let idle = this.candidate[own] === 1 && this.running[own] === 0 && this.shadowed[id] === 0;
    if (idle) {
      // The call's links are among its group's: nothing that crosses those may start before it ends
      // (one ns past the end, so a flow starting as the call ends never meets it on the event queue).
      const endNs = nowNs + Math.ceil(idleNs()) + 1;
      let ownQueue = -1;
      for (let k = a; k < b; k++) if (this.touchGroup[k] === own) ownQueue = this.touchQueue[k];
      const qs = this.queues[own];
      for (let q = 0; q < qs.length && idle; q++) {
        if (q === ownQueue) continue;
        const queue = qs[q];
        if (queue.pos < queue.ids.length && this.earliestStartNs(queue.ids[queue.pos], nowNs, endNs) < endNs) idle = false;
      }
    }
    for (let k = a; k < b; k++) {
      // Tasks of a queue start in its order; the cursor passes every one that has started.
      const queue = this.queues[this.touchGroup[k]][this.touchQueue[k]];
      while (queue.pos < queue.ids.length && this.startNs[queue.ids[queue.pos]] >= 0) queue.pos++;
    }
    this.runStarted(this.plans.primary[id]!.index);
    if (idle) this.idleRunning[own]++;
    return idle;
  }

  /** Called as collective `id` ends; `idle` as `start` returned. */
  completed(id: number, idle: boolean): void {
    const e = this.plans.primary[id]!;
    this.runEnded(e.index);
    if (idle) this.idleRunning[e.groupId]--;
  }

  /** A run of plan entry `index` put its flows on the network (the task's own, or a shadow's). */
  runStarted(index: number): void {
    const gs = this.runTouch[index];
    for (let k = 0; k < gs.length; k++) this.running[gs[k]]++;
  }

  /** Shadow runs report here as they end: their flows may outlive the task that started them. */
  onCollectiveDone(index: number): void {
    this.runEnded(index);
  }

  private runEnded(index: number): void {
    const gs = this.runTouch[index];
    for (let k = 0; k < gs.length; k++) this.running[gs[k]]--;
  }

  /** A lower bound on when not-started task `x` can start (stops early once it reaches `enoughNs`). */
  private earliestStartNs(x: number, nowNs: number, enoughNs: number): number {
    // x is a collective (duration 0 in the bounds): its own stream bound is a bound on its start.
    let t = this.bounds.notStartedEndNs(x, nowNs);
    if (t >= enoughNs) return t;
    const tasks = this.program.tasks;
    for (const d of tasks[x].deps) {
      let end: number;
      if (this.endNs[d] >= 0) end = this.endNs[d];
      else if (this.startNs[d] >= 0) end = tasks[d].collective ? nowNs : this.startNs[d] + tasks[d].durationNs;
      else end = this.bounds.notStartedEndNs(d, nowNs);
      if (end > t) t = end;
      if (t >= enoughNs) return t;
    }
    return t;
  }
}

/** A flow met a collective running on idle time (the checks should make this impossible). */
export class IdleOverlap extends Error {
  constructor() {
    super('a collective running on idle-network time met another flow; run again with flows throughout');
  }
}
