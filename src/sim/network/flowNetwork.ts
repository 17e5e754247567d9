import type { EventTarget, Simulator } from '../engine/simulator.js';
import type { FlowListener } from './types.js';
import { MinHeap, resized } from './minHeap.js';

/** Flow ids carry the slot in their low 22 bits and a reuse generation above, like event handles. */
const SLOT_LIMIT = 1 << 22;
/** A flow with less than this fraction of its bytes left counts as done (guards float drift). */
const DONE_FRACTION = 1e-6;
const SOLVE = -1;
const FREE = 0;
const ON_LINKS = 1;
const INSTANT = 2;

/**
 * Fluid (flow-level) network: active flows share link bandwidth max-min fairly, by progressive filling, the
 * model SimGrid uses and validated. Rates are recomputed only for the connected component (links ↔ flows)
 * around flows that started or ended, and all changes made at one simulated instant are solved once, by a
 * single solve event scheduled at the current time.
 *
 * Progressive filling runs as water-filling on a heap: all unfrozen flows rise at a common level t; link l
 * saturates at t_l = (capacity − rate of its frozen flows) / (its unfrozen flows). Freezing a flow at level
 * t ≤ t_l can only raise t_l of its other links, so stale heap keys are skipped lazily. Rate caps are one
 * more event per flow. Cost: O(F·path·log) for F flows in the component.
 */
export class FlowNetwork implements EventTarget {
  private readonly sim: Simulator;
  private readonly capacity: Float64Array;
  private readonly delivered: Float64Array;
  /** Slots of the active flows crossing each link. */
  private readonly linkFlows: (number[] | undefined)[];
  private readonly linkEpoch: Int32Array;
  private readonly frozenUse: Float64Array;
  private readonly unfrozen: Int32Array;
  private readonly linkKey: Float64Array;
  private readonly stack: Int32Array;
  private readonly dirty: Int32Array;
  private readonly dirtyMark: Uint8Array;
  private dirtyCount = 0;
  private solvePending = false;
  private epoch = 0;
  private solves = 0;
  private active = 0;
  private readonly heap = new MinHeap();

  // Per-flow state, indexed by slot.
  private cap = 0;
  private state = new Uint8Array(0);
  private gen = new Float64Array(0);
  private size = new Float64Array(0);
  private remaining = new Float64Array(0);
  private rate = new Float64Array(0);
  private rateCap = new Float64Array(0);
  private lastNs = new Float64Array(0);
  private handle = new Float64Array(0);
  private tag = new Float64Array(0);
  private flowEpoch = new Int32Array(0);
  private frozenEpoch = new Int32Array(0);
  private newRate = new Float64Array(0);
  private comp = new Int32Array(0);
  private freeSlots = new Int32Array(0);
  private freeCount = 0;
  private slotsUsed = 0;
  private routes: (Int32Array | undefined)[] = [];
  private pos: (Int32Array | undefined)[] = [];
  private listeners: (FlowListener | undefined)[] = [];

  /** `linkBandwidthGBps[l]` is link l's capacity in GB/s, which is bytes per ns. */
  constructor(sim: Simulator, linkBandwidthGBps: ArrayLike<number>) {
    this.sim = sim;
    const L = linkBandwidthGBps.length;
    this.capacity = Float64Array.from(linkBandwidthGBps);
    this.delivered = new Float64Array(L);
    this.linkFlows = new Array(L);
    this.linkEpoch = new Int32Array(L);
    this.frozenUse = new Float64Array(L);
    this.unfrozen = new Int32Array(L);
    this.linkKey = new Float64Array(L);
    this.stack = new Int32Array(L);
    this.dirty = new Int32Array(L);
    this.dirtyMark = new Uint8Array(L);
    this.grow(64);
  }

  /** Flows started and not yet reported done. */
  get activeFlowCount(): number {
    return this.active;
  }

  /** Number of rate solves run so far (changes at one instant share one solve). */
  get solveCount(): number {
    return this.solves;
  }

  /**
   * Starts a flow of `bytes` over `links` (in order; the array is kept, not copied, so do not mutate it).
   * `listener.onFlowDone(tag)` is called from an engine event when the last byte is delivered (integer ns,
   * rounded up); an empty route or 0 bytes completes at the current time, still through an event.
   * Returns the flow id.
   */
  startFlow(links: Int32Array, bytes: number, listener: FlowListener, tag: number, rateCapGBps = Infinity): number {
    if (!(bytes >= 0) || !Number.isFinite(bytes)) throw new RangeError(`flow bytes must be finite and >= 0, got ${bytes}`);
    if (!(rateCapGBps > 0)) throw new RangeError(`flow rate cap must be > 0, got ${rateCapGBps}`);
    const f = this.allocSlot();
    this.gen[f]++;
    this.listeners[f] = listener;
    this.tag[f] = tag;
    this.active++;
    if (links.length === 0 || bytes === 0) {
      this.state[f] = INSTANT;
      this.handle[f] = this.sim.schedule(0, this, f);
      return this.gen[f] * SLOT_LIMIT + f;
    }
    this.state[f] = ON_LINKS;
    this.size[f] = this.remaining[f] = bytes;
    this.rate[f] = 0;
    this.rateCap[f] = rateCapGBps;
    this.lastNs[f] = this.sim.now;
    this.handle[f] = -1;
    this.routes[f] = links;
    let p = this.pos[f];
    if (p === undefined || p.length < links.length) p = this.pos[f] = new Int32Array(Math.max(8, links.length));
    for (let k = 0; k < links.length; k++) {
      const l = links[k];
      let list = this.linkFlows[l];
      if (list === undefined) list = this.linkFlows[l] = [];
      p[k] = list.length;
      list.push(f);
      this.markDirty(l);
    }
    this.requestSolve();
    return this.gen[f] * SLOT_LIMIT + f;
  }

  /** Current rate of a flow in GB/s (bytes/ns); 0 once it is done or before its first solve. */
  rateOf(flowId: number): number {
    const f = flowId % SLOT_LIMIT;
    if (f >= this.slotsUsed || this.gen[f] !== Math.floor(flowId / SLOT_LIMIT) || this.state[f] !== ON_LINKS) return 0;
    return this.rate[f];
  }

  /** Total bytes that have crossed link `linkId` up to now, including the in-flight share of active flows. */
  bytesDelivered(linkId: number): number {
    let total = this.delivered[linkId];
    const list = this.linkFlows[linkId];
    if (list !== undefined) {
      const now = this.sim.now;
      for (const f of list) if (now > this.lastNs[f]) total += Math.min(this.remaining[f], this.rate[f] * (now - this.lastNs[f]));
    }
    return total;
  }

  /** Engine callback: `arg` is a flow slot (completion) or SOLVE. */
  onEvent(arg: number): void {
    if (arg === SOLVE) this.solve();
    else this.complete(arg);
  }

  private complete(f: number): void {
    const st = this.state[f];
    if (st === FREE) return;
    this.handle[f] = -1;
    if (st === ON_LINKS) {
      const now = this.sim.now;
      const r = this.rate[f];
      const left = r === Infinity ? 0 : this.remaining[f] - r * (now - this.lastNs[f]);
      if (left > DONE_FRACTION * this.size[f]) {
        // Float drift left a sliver: deliver what was sent and re-arm.
        this.advance(f, now);
        if (this.rate[f] > 0) this.handle[f] = this.sim.schedule(this.remaining[f] / this.rate[f], this, f);
        return;
      }
      this.detach(f);
    }
    const listener = this.listeners[f] as FlowListener;
    const tag = this.tag[f];
    this.release(f);
    listener.onFlowDone(tag);
  }

  /** Delivers a finished flow's last bytes and takes it off its links. */
  private detach(f: number): void {
    const links = this.routes[f] as Int32Array;
    const p = this.pos[f] as Int32Array;
    const rest = this.remaining[f];
    for (let k = 0; k < links.length; k++) {
      const l = links[k];
      this.delivered[l] += rest;
      const list = this.linkFlows[l] as number[];
      const last = list.pop() as number;
      const at = p[k];
      if (last !== f) {
        list[at] = last;
        const lr = this.routes[last] as Int32Array;
        const lp = this.pos[last] as Int32Array;
        for (let q = 0; q < lr.length; q++) {
          if (lr[q] === l && lp[q] === list.length) {
            lp[q] = at;
            break;
          }
        }
      }
      this.markDirty(l);
    }
    this.remaining[f] = 0;
    this.requestSolve();
  }

  private release(f: number): void {
    this.state[f] = FREE;
    this.routes[f] = undefined;
    this.listeners[f] = undefined;
    this.rate[f] = 0;
    this.active--;
    this.freeSlots[this.freeCount++] = f;
  }

  /** Brings a flow's remaining bytes (and its links' delivered bytes) up to `now` at its current rate. */
  private advance(f: number, now: number): void {
    const dt = now - this.lastNs[f];
    if (dt > 0 && this.rate[f] > 0) {
      const d = Math.min(this.remaining[f], this.rate[f] * dt);
      this.remaining[f] -= d;
      const links = this.routes[f] as Int32Array;
      for (let k = 0; k < links.length; k++) this.delivered[links[k]] += d;
    }
    this.lastNs[f] = now;
  }

  private markDirty(l: number): void {
    if (this.dirtyMark[l] === 0) {
      this.dirtyMark[l] = 1;
      this.dirty[this.dirtyCount++] = l;
    }
  }

  private requestSolve(): void {
    if (!this.solvePending) {
      this.solvePending = true;
      this.sim.schedule(0, this, SOLVE);
    }
  }

  private solve(): void {
    this.solvePending = false;
    this.solves++;
    const epoch = ++this.epoch;
    const now = this.sim.now;
    // 1. Collect the component(s) reachable from the dirty links.
    let top = 0;
    for (let d = 0; d < this.dirtyCount; d++) {
      const l = this.dirty[d];
      this.dirtyMark[l] = 0;
      if (this.linkEpoch[l] !== epoch) {
        this.linkEpoch[l] = epoch;
        this.stack[top++] = l;
      }
    }
    this.dirtyCount = 0;
    let nComp = 0;
    const heap = this.heap;
    heap.clear();
    while (top > 0) {
      const l = this.stack[--top];
      const list = this.linkFlows[l];
      const n = list === undefined ? 0 : list.length;
      this.unfrozen[l] = n;
      this.frozenUse[l] = 0;
      if (n === 0) continue;
      this.linkKey[l] = this.capacity[l] / n;
      heap.push(this.linkKey[l], l);
      for (const f of list as number[]) {
        if (this.flowEpoch[f] === epoch) continue;
        this.flowEpoch[f] = epoch;
        this.comp[nComp++] = f;
        this.advance(f, now);
        if (this.rateCap[f] < Infinity) heap.push(this.rateCap[f], -(f + 1));
        const links = this.routes[f] as Int32Array;
        for (let k = 0; k < links.length; k++) {
          const l2 = links[k];
          if (this.linkEpoch[l2] !== epoch) {
            this.linkEpoch[l2] = epoch;
            this.stack[top++] = l2;
          }
        }
      }
    }
    // 2. Progressive filling.
    let left = nComp;
    while (left > 0 && heap.size > 0) {
      const level = heap.topKey();
      const id = heap.pop();
      if (id >= 0) {
        if (this.unfrozen[id] === 0 || level !== this.linkKey[id]) continue;
        for (const f of this.linkFlows[id] as number[]) if (this.frozenEpoch[f] !== epoch) left -= this.freeze(f, level, epoch);
      } else if (this.frozenEpoch[-id - 1] !== epoch) {
        left -= this.freeze(-id - 1, level, epoch);
      }
    }
    // 3. New rates and completion times; a flow whose rate did not change keeps its event.
    for (let k = 0; k < nComp; k++) {
      const f = this.comp[k];
      const r = this.frozenEpoch[f] === epoch ? this.newRate[f] : Infinity;
      if (r === this.rate[f] && this.handle[f] >= 0) continue;
      if (this.handle[f] >= 0) this.sim.cancel(this.handle[f]);
      this.rate[f] = r;
      this.handle[f] = r > 0 ? this.sim.schedule(r === Infinity ? 0 : this.remaining[f] / r, this, f) : -1;
    }
  }

  private freeze(f: number, level: number, epoch: number): number {
    this.frozenEpoch[f] = epoch;
    this.newRate[f] = level;
    const links = this.routes[f] as Int32Array;
    for (let k = 0; k < links.length; k++) {
      const l = links[k];
      this.frozenUse[l] += level;
      const n = --this.unfrozen[l];
      if (n > 0) {
        const c = this.capacity[l];
        const key = c === Infinity ? Infinity : Math.max(level, (c - this.frozenUse[l]) / n);
        this.linkKey[l] = key;
        this.heap.push(key, l);
      }
    }
    return 1;
  }

  private allocSlot(): number {
    if (this.freeCount > 0) return this.freeSlots[--this.freeCount];
    if (this.slotsUsed === this.cap) this.grow(this.cap * 2);
    if (this.slotsUsed >= SLOT_LIMIT) throw new Error(`more than ${SLOT_LIMIT} concurrent flows`);
    return this.slotsUsed++;
  }

  private grow(cap: number): void {
    const f64 = (a: Float64Array) => resized(a, new Float64Array(cap));
    const i32 = (a: Int32Array) => resized(a, new Int32Array(cap));
    this.state = resized(this.state, new Uint8Array(cap));
    [this.gen, this.size, this.remaining, this.rate] = [f64(this.gen), f64(this.size), f64(this.remaining), f64(this.rate)];
    [this.rateCap, this.lastNs, this.handle, this.tag] = [f64(this.rateCap), f64(this.lastNs), f64(this.handle), f64(this.tag)];
    this.newRate = f64(this.newRate);
    [this.flowEpoch, this.frozenEpoch, this.comp, this.freeSlots] = [i32(this.flowEpoch), i32(this.frozenEpoch), i32(this.comp), i32(this.freeSlots)];
    this.cap = cap;
  }
}
