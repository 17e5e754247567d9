import { resized } from './minHeap.js';
import type { FlowListener } from './types.js';

/** Flow ids carry the slot in their low 22 bits and a reuse generation above, like event handles. */
export const SLOT_LIMIT = 1 << 22;
export const FREE = 0;
export const ON_LINKS = 1;
export const INSTANT = 2;

/**
 * The state under FlowNetwork: per-flow fields in typed arrays indexed by slot (reused, so a steady run
 * allocates nothing), the flows on each link, and the links changed since the last rate solve. One table is shared,
 * by reference, by the network that owns it and the solvers that rate its flows (MaxMinSolver, IncrementalRates):
 * its fields are theirs to read and write, in place, with no copy (a solve walks thousands of flows). A grow
 * replaces the per-flow arrays, so hold the table, never one of its arrays, across a flow's start.
 */
export class FlowTable {
  readonly capacity: Float64Array;
  readonly delivered: Float64Array;
  /**
   * Slots of the active flows crossing each link: `pool[linkBase[l] .. linkBase[l] + linkCount[l])`, room
   * for `linkRoom[l]`. One pool rather than an array per link: a list access is then one memory access,
   * not three, and nothing is shrunk and regrown as lists empty and refill every ring step.
   */
  pool = new Int32Array(1 << 12);
  private poolTop = 0;
  readonly linkBase: Int32Array;
  readonly linkCount: Int32Array;
  private readonly linkRoom: Int32Array;
  /**
   * Per link, the flows it carries counted with their multiplicity (what max-min sharing divides its
   * capacity among); equals `linkCount` when every flow has multiplicity 1.
   */
  readonly linkMult: Int32Array;
  /** Links whose set of flows changed since the last solve, and a mark per link for them. */
  readonly dirty: Int32Array;
  readonly dirtyMark: Uint8Array;
  dirtyCount = 0;
  active = 0;

  // Per-flow state, indexed by slot.
  private cap = 0;
  state = new Uint8Array(0);
  gen = new Float64Array(0);
  size = new Float64Array(0);
  remaining = new Float64Array(0);
  /** Current rate in bytes/ns; Infinity for a flow that only crosses links of infinite capacity. */
  rate = new Float64Array(0);
  rateCap = new Float64Array(0);
  /**
   * How many identical flows (same route, start, bytes and cap) this one stands for: under max-min
   * fairness they always share one rate and one finish time, so they are solved as one flow that counts
   * `mult` times on each of its links. Its `rate` and `remaining` are per flow.
   */
  mult = new Int32Array(0);
  /** Time up to which `remaining` is brought. */
  lastNs = new Float64Array(0);
  handle = new Float64Array(0);
  tag = new Float64Array(0);
  flowEpoch = new Int32Array(0);
  frozenEpoch = new Int32Array(0);
  newRate = new Float64Array(0);
  /** Scratch list of flow slots (a solve's component). */
  comp = new Int32Array(0);
  /** Flows started since the last solve, in start order, and the solve round each last joined in. */
  joined = new Int32Array(0);
  joinedCount = 0;
  joinRound = new Int32Array(0);
  private freeSlots = new Int32Array(0);
  private freeCount = 0;
  slotsUsed = 0;
  /**
   * Routes, flat: flow f crosses links `route[f·stride + k]` for k < `routeLen[f]`, and sits at
   * `pos[f·stride + k]` in the list of its k-th link (for O(1) removal). Flat arrays rather than an array
   * per flow: the solver walks routes of thousands of flows per solve, and this is one memory access each.
   */
  stride = 16;
  route = new Int32Array(0);
  routeLen = new Int32Array(0);
  private pos = new Int32Array(0);
  listeners: (FlowListener | undefined)[] = [];

  /** `linkBandwidthGBps[l]` is link l's capacity in GB/s, which is bytes per ns. */
  constructor(linkBandwidthGBps: ArrayLike<number>) {
    const L = linkBandwidthGBps.length;
    this.capacity = Float64Array.from(linkBandwidthGBps);
    this.delivered = new Float64Array(L);
    this.linkBase = new Int32Array(L);
    this.linkCount = new Int32Array(L);
    this.linkRoom = new Int32Array(L);
    this.linkMult = new Int32Array(L);
    this.dirty = new Int32Array(L);
    this.dirtyMark = new Uint8Array(L);
    this.grow(64);
  }

  allocSlot(): number {
    if (this.freeCount > 0) return this.freeSlots[--this.freeCount];
    if (this.slotsUsed === this.cap) this.grow(this.cap * 2);
    if (this.slotsUsed >= SLOT_LIMIT) throw new Error(`more than ${SLOT_LIMIT} concurrent flows`);
    return this.slotsUsed++;
  }

  release(f: number): void {
    this.state[f] = FREE;
    this.routeLen[f] = 0;
    this.listeners[f] = undefined;
    this.rate[f] = 0;
    this.active--;
    this.freeSlots[this.freeCount++] = f;
  }

  /** Puts flow f (its `mult` set) on each link of `links` and marks them dirty. */
  attach(f: number, links: Int32Array): void {
    if (links.length > this.stride) this.widen(links.length);
    const base = f * this.stride;
    this.routeLen[f] = links.length;
    for (let k = 0; k < links.length; k++) {
      const l = links[k];
      const n = this.linkCount[l];
      if (n === this.linkRoom[l]) this.moveList(l, Math.max(4, 2 * n));
      this.pool[this.linkBase[l] + n] = f;
      this.linkCount[l] = n + 1;
      this.linkMult[l] += this.mult[f];
      this.route[base + k] = l;
      this.pos[base + k] = n;
      this.markDirty(l);
    }
  }

  /** Takes flow f off its links (swapping the last flow of each list into its place) and marks them dirty. */
  unlink(f: number): void {
    const S = this.stride;
    const end = f * S + this.routeLen[f];
    for (let i = f * S; i < end; i++) {
      const l = this.route[i];
      const base = this.linkBase[l];
      const n = --this.linkCount[l];
      this.linkMult[l] -= this.mult[f];
      const last = this.pool[base + n];
      const at = this.pos[i];
      if (last !== f) {
        this.pool[base + at] = last;
        const lastEnd = last * S + this.routeLen[last];
        for (let q = last * S; q < lastEnd; q++) {
          if (this.route[q] === l && this.pos[q] === n) {
            this.pos[q] = at;
            break;
          }
        }
      }
      this.markDirty(l);
    }
  }

  markDirty(l: number): void {
    if (this.dirtyMark[l] === 0) {
      this.dirtyMark[l] = 1;
      this.dirty[this.dirtyCount++] = l;
    }
  }

  clearDirty(): void {
    for (let d = 0; d < this.dirtyCount; d++) this.dirtyMark[this.dirty[d]] = 0;
    this.dirtyCount = 0;
  }

  /** Grows every per-flow array (the solver's too) to `cap` slots. */
  grow(cap: number): void {
    const f64 = (a: Float64Array) => resized(a, new Float64Array(cap));
    const i32 = (a: Int32Array) => resized(a, new Int32Array(cap));
    this.state = resized(this.state, new Uint8Array(cap));
    [this.gen, this.size, this.remaining, this.rate] = [
      f64(this.gen),
      f64(this.size),
      f64(this.remaining),
      f64(this.rate),
    ];
    [this.rateCap, this.lastNs, this.handle, this.tag] = [
      f64(this.rateCap),
      f64(this.lastNs),
      f64(this.handle),
      f64(this.tag),
    ];
    this.newRate = f64(this.newRate);
    [this.flowEpoch, this.frozenEpoch, this.comp, this.freeSlots] = [
      i32(this.flowEpoch),
      i32(this.frozenEpoch),
      i32(this.comp),
      i32(this.freeSlots),
    ];
    [this.joined, this.joinRound, this.routeLen, this.mult] = [
      i32(this.joined),
      i32(this.joinRound),
      i32(this.routeLen),
      i32(this.mult),
    ];
    this.route = resized(this.route, new Int32Array(cap * this.stride));
    this.pos = resized(this.pos, new Int32Array(cap * this.stride));
    this.cap = cap;
  }

  /**
   * Gives link l's list room for `room` flows at the top of the pool. Its old place is left unused; when
   * the pool is full, all lists are packed into a new one, twice as large as what they need.
   */
  private moveList(l: number, room: number): void {
    if (this.poolTop + room > this.pool.length) {
      let need = room;
      for (let k = 0; k < this.linkRoom.length; k++) need += this.linkRoom[k];
      const packed = new Int32Array(Math.max(this.pool.length, 2 * need));
      let top = 0;
      for (let k = 0; k < this.linkRoom.length; k++) {
        packed.set(this.pool.subarray(this.linkBase[k], this.linkBase[k] + this.linkCount[k]), top);
        this.linkBase[k] = top;
        top += this.linkRoom[k];
      }
      [this.pool, this.poolTop] = [packed, top];
    }
    const base = this.linkBase[l];
    this.pool.copyWithin(this.poolTop, base, base + this.linkCount[l]);
    this.linkBase[l] = this.poolTop;
    this.linkRoom[l] = room;
    this.poolTop += room;
  }

  /** Re-lays the flat route arrays out for routes of up to `length` links (rare: routes are short). */
  private widen(length: number): void {
    const S = this.stride;
    let wide = S;
    while (wide < length) wide *= 2;
    const route = new Int32Array(this.cap * wide);
    const pos = new Int32Array(this.cap * wide);
    for (let f = 0; f < this.slotsUsed; f++) {
      route.set(this.route.subarray(f * S, f * S + this.routeLen[f]), f * wide);
      pos.set(this.pos.subarray(f * S, f * S + this.routeLen[f]), f * wide);
    }
    [this.route, this.pos, this.stride] = [route, pos, wide];
  }
}
