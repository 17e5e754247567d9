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
 * - no flows crossing those links are in flight (shadow flows included: they may outlive their task), and
 * - for each stream queue of touching tasks, the next one cannot start before the call would end: it
 *   waits for the tasks ahead of it in its stream and for all its dependencies, and a task that has
 *   not ended ends no earlier than its stream allows (`StreamBounds`). Later tasks of a queue start
 *   after its head.
 *
 * A call with shadows (symmetric mode) is checked with them as one unit: its links are those of the
 * call and of every shadow that runs as flows, over the groups of all of them, and it holds them until
 * the last shadow would be done on an idle network (`CollectivePlans.compositeNs`); the call itself
 * ends when its own flows would. Shadows that cross each other's links are fine: they start together
 * in both runs.
 *
 * A group whose links unordered tasks (pipeline sends) touch is never run this way.
 */
export class IdleWindows implements CollectiveListener {
  /**
   * Watched groups touched by task i: touchGroup[touchStart[i] .. touchStart[i + 1]); touchQueue: that group's queue
   * holding i.
   */
  private readonly touchStart: Int32Array;
  private readonly touchGroup: Int32Array;
  private readonly touchQueue: Int32Array;
  /** Per group: its queues of touching tasks (program order), with a cursor at the first not started. */
  private readonly queues: { ids: Int32Array; pos: number }[][];
  /** Per group: runs (a task's own flows, or one of its shadows') now in flight that cross its links. */
  private readonly running: Int32Array;
  /** Per plan entry (by `index`): the watched groups its flows cross. */
  private readonly runTouch: Int32Array[];
  private readonly idleRunning: Int32Array;
  private readonly candidate: Uint8Array;
  /** Per task run on idle time: its idle-network time, and how long it holds its links (its shadows may end later). */
  private readonly ownNs: Float64Array;
  private readonly holdNs: Float64Array;
  /** Per task: 1 while its start waits for the end of the current instant (`Start.Wait`). */
  private readonly waiting: Uint8Array;

  /* eslint-disable-next-line max-lines-per-function -- sets up the typed arrays of the idle-window index in one
     place; debt: to split */
  constructor(
    private readonly program: Program,
    private readonly plans: CollectivePlans,
    private readonly startNs: Float64Array,
    private readonly endNs: Float64Array,
    private readonly bounds: StreamBounds,
  ) {
    const groups = plans.privateGroup.length;
    const tasks = program.tasks;
    const n = tasks.length;
    // The calls that run as flows: every task's own, and its shadows not on private links.
    const used = new Set<CollectivePlanEntry>();
    const seenLists = new Set<CollectivePlanEntry[]>();
    let linkCount = 0;
    const use = (e: CollectivePlanEntry) => {
      if (used.has(e)) return;
      used.add(e);
      for (const l of e.links) if (l >= linkCount) linkCount = l + 1;
    };
    for (let i = 0; i < n; i++) {
      const p = plans.primary[i];
      if (!p) continue;
      use(p);
      const sh = plans.runShadows[i];
      if (sh && !seenLists.has(sh)) {
        seenLists.add(sh);
        for (const e of sh) use(e);
      }
    }
    // Links of unordered transfers (and their shadows): these may overlap each other and start in any
    // order, so no group using such a link is watched.
    const unordered = new Uint8Array(linkCount);
    for (let i = 0; i < n; i++) {
      const p = plans.primary[i];
      if (!p || tasks[i].ordered) continue;
      for (const l of p.links) unordered[l] = 1;
      for (const e of plans.runShadows[i] ?? []) for (const l of e.links) unordered[l] = 1;
    }
    const candidate = new Uint8Array(groups);
    for (const e of used) candidate[e.groupId] = 1;
    for (const e of used) for (const l of e.links) if (unordered[l] === 1) candidate[e.groupId] = 0;
    this.candidate = candidate;
    // Which watched groups use each link (each group once: its calls are taken together).
    const owners: (number[] | undefined)[] = new Array(linkCount).fill(undefined);
    const stamp = new Int32Array(linkCount).fill(-1);
    const byGroup = [...used].filter((e) => candidate[e.groupId] === 1).sort((x, y) => x.groupId - y.groupId);
    for (const e of byGroup) {
      for (const l of e.links) {
        if (stamp[l] === e.groupId) continue;
        stamp[l] = e.groupId;
        const list = owners[l];
        if (!list) owners[l] = [e.groupId];
        else list.push(e.groupId);
      }
    }
    const NONE: number[] = [];
    const linkOwners = (l: number) => owners[l] ?? NONE;
    // Watched groups each ordered task's flows (its own and its shadows') cross, once per distinct (call, shadows).
    const touched: number[][] = new Array(n);
    const memo = new Map<CollectivePlanEntry, Map<CollectivePlanEntry[] | undefined, number[]>>();
    const scratch = new Set<number>();
    for (let i = 0; i < n; i++) {
      const p = plans.primary[i];
      if (!p || !tasks[i].ordered) continue;
      const sh = plans.runShadows[i];
      let byShadows = memo.get(p);
      if (!byShadows) memo.set(p, (byShadows = new Map()));
      let list = byShadows.get(sh);
      if (!list) {
        scratch.clear();
        for (const l of p.links) for (const g of linkOwners(l)) scratch.add(g);
        for (const e of sh ?? []) for (const l of e.links) for (const g of linkOwners(l)) scratch.add(g);
        byShadows.set(sh, (list = [...scratch]));
      }
      if (list.length > 0) touched[i] = list;
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
    this.ownNs = new Float64Array(n);
    this.holdNs = new Float64Array(n);
    this.waiting = new Uint8Array(n);
    // Watched groups each distinct call's own flows cross (a run holds these while it is in flight).
    this.runTouch = plans.entries.map((e) => {
      scratch.clear();
      for (const l of e.links) if (l < linkCount) for (const g of linkOwners(l)) scratch.add(g);
      return Int32Array.from(scratch);
    });
  }

  /**
   * Called as collective `id` starts at `nowNs`; returns how it runs. `Idle`: it ends after
   * `idleNs(id)`, no flows of its shadows start, and `holdsPastEnd(id)` says when (after its start)
   * `release(id)` must be called if not at its end (`completed` does that). `Wait` (only when
   * `mayWait`): it could run on idle time but for runs still counted in flight, which may end at this
   * very instant: call again, without `mayWait`, after the other events of this instant. Throws when a
   * flow would meet a call running on idle time, which the checks rule out: it means a bug, and the
   * caller's fallback runs everything as flows.
   */
  start(id: number, nowNs: number, mayWait = false): Start {
    const a = this.touchStart[id];
    const b = this.touchStart[id + 1];
    for (let k = a; k < b; k++) if (this.idleRunning[this.touchGroup[k]] > 0) throw new IdleOverlap();
    const p = this.plans.primary[id]!;
    const sh = this.plans.runShadows[id];
    let idle = this.candidate[p.groupId] === 1;
    for (let s = 0; idle && sh && s < sh.length; s++) idle = this.candidate[sh[s].groupId] === 1;
    let busy = false;
    if (idle) {
      busy = this.running[p.groupId] > 0;
      for (let s = 0; !busy && sh && s < sh.length; s++) busy = this.running[sh[s].groupId] > 0;
    }
    if (idle && !(busy && !mayWait)) {
      let ownNs: number;
      let allNs: number;
      if (sh) ({ ownNs, allNs } = this.plans.compositeNs(p, sh));
      else ownNs = allNs = this.plans.idleNs(p);
      // Nothing that crosses those links may start before the window ends (one ns past it, so a flow
      // starting as it ends never meets it on the event queue). Tasks queued after this one in its
      // stream start once it has ended.
      const endNs = nowNs + Math.ceil(allNs) + 1;
      const holdsPast = allNs > ownNs;
      idle = this.quietUntil(p.groupId, id, a, b, nowNs, endNs, holdsPast);
      for (let s = 0; idle && sh && s < sh.length; s++)
        idle = this.quietUntil(sh[s].groupId, id, a, b, nowNs, endNs, holdsPast);
      this.ownNs[id] = ownNs;
      this.holdNs[id] = allNs;
    }
    if (idle && busy && mayWait) {
      // Runs ending at this very instant (a call's shadows end with it) are still counted: look again
      // once the other events of this instant have run. Until then the call counts as starting now.
      this.waiting[id] = 1;
      return Start.Wait;
    }
    this.waiting[id] = 0;
    if (busy) idle = false;
    for (let k = a; k < b; k++) {
      // Tasks of a queue start in its order; the cursor passes every one that has started.
      const queue = this.queues[this.touchGroup[k]][this.touchQueue[k]];
      while (queue.pos < queue.ids.length && this.startNs[queue.ids[queue.pos]] >= 0) queue.pos++;
    }
    this.runStarted(p.index);
    if (idle) {
      this.idleRunning[p.groupId]++;
      for (const e of sh ?? []) {
        this.runStarted(e.index);
        this.idleRunning[e.groupId]++;
      }
    }
    return idle ? Start.Idle : Start.Flows;
  }

  /** Idle-network time of call `id`, which `start` ran on idle time. */
  idleNs(id: number): number {
    return this.ownNs[id];
  }

  /**
   * Until when, after its start, call `id` (run on idle time) holds its links: past its end when its shadows outlast
   * it.
   */
  holdsPastEnd(id: number): number {
    return this.holdNs[id] > this.ownNs[id] ? this.holdNs[id] : -1;
  }

  /** Called as collective `id` ends; `idle` as `start` returned. */
  completed(id: number, idle: boolean): void {
    if (!idle) this.runEnded(this.plans.primary[id]!.index);
    else if (this.holdNs[id] <= this.ownNs[id]) this.release(id);
  }

  /** Call `id`, run on idle time, and its shadows are done with their links. */
  release(id: number): void {
    const p = this.plans.primary[id]!;
    this.runEnded(p.index);
    this.idleRunning[p.groupId]--;
    for (const e of this.plans.runShadows[id] ?? []) {
      this.runEnded(e.index);
      this.idleRunning[e.groupId]--;
    }
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

  /**
   * Whether no task touching group `g` can start before `endNs`, call `id` (touching groups
   * touchGroup[a .. b)) starting at `nowNs`; `holdsPast`: it holds its links past its own end.
   */
  /* eslint-disable-next-line max-params -- called once per task or flow on the hot path; positional, with no object
     per call, until npm run bench shows an options object costs nothing */
  private quietUntil(
    g: number,
    id: number,
    a: number,
    b: number,
    nowNs: number,
    endNs: number,
    holdsPast: boolean,
  ): boolean {
    let ownQueue = -1;
    for (let k = a; k < b; k++) if (this.touchGroup[k] === g) ownQueue = this.touchQueue[k];
    const qs = this.queues[g];
    for (let q = 0; q < qs.length; q++) {
      const { ids, pos } = qs[q];
      let j = pos;
      while (j < ids.length && (ids[j] === id || (this.startNs[ids[j]] >= 0 && this.waiting[ids[j]] === 0))) j++;
      if (j >= ids.length) continue;
      // Tasks after this call in its own stream wait for it to end.
      if (q === ownQueue && !holdsPast) continue;
      if (this.earliestStartNs(ids[j], nowNs, endNs) < endNs) return false;
    }
    return true;
  }

  /** A lower bound on when not-started task `x` can start (stops early once it reaches `enoughNs`). */
  private earliestStartNs(x: number, nowNs: number, enoughNs: number): number {
    if (this.waiting[x] === 1) return nowNs;
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

/** How a collective starts: as flows, on idle time, or after the other events of this instant (`mayWait`). */
export const Start = { Flows: 0, Idle: 1, Wait: 2 } as const;
export type Start = (typeof Start)[keyof typeof Start];

/** A flow met a collective running on idle time (the checks should make this impossible). */
export class IdleOverlap extends Error {
  constructor() {
    super('a collective running on idle-network time met another flow; run again with flows throughout');
  }
}
