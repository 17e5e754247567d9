import type { Simulator, EventTarget } from '../engine/simulator.js';
import { CollectiveRun, type CollectiveListener, type FlowStarter } from '../collectives/collectiveRun.js';
import type { CollectiveService } from '../collectives/collectiveService.js';
import { STREAMS, streamIndex, type Program } from './types.js';
import type { Trace } from './trace.js';
import { CollectivePlans } from './collectivePlans.js';
import { IdleWindows, Start } from './idleWindows.js';
import { StreamBounds } from './streamBounds.js';

export { IdleOverlap } from './idleWindows.js';

export interface ExecutorOptions {
  /**
   * Run a collective as one timed event of its idle-network time when no other flow can cross its
   * links meanwhile (`IdleWindows`). Throws `IdleOverlap` if a flow ever meets such a call (a bug; the
   * caller then runs with flows only). The idle-windows shortcut (shortcuts.ts); off unless given.
   */
  idleWindows?: boolean;
  /** Leave out shadow flows on links nobody else uses (the shadow-pruning shortcut); by default with `idleWindows`. */
  shadowPruning?: boolean;
}

const IGNORE: CollectiveListener = { onCollectiveDone: () => {} };

/** A task that waits forever means the program is malformed (a cycle, or stream orders that cross). */
export class DeadlockError extends Error {
  constructor(
    readonly stuckTasks: number[],
    labels: string[],
  ) {
    super(
      `the step program cannot finish: ${stuckTasks.length} task(s) never became ready, ` +
        `e.g. ${labels.slice(0, 3).join('; ')}`,
    );
  }
}

/**
 * Runs a program on the event engine. A task starts when all its dependencies are done and it is at
 * the head of the stream of every rank it occupies (streams run in program order, like CUDA
 * streams). Local tasks take their duration; collectives become flows on the shared network (or,
 * with `idleWindows`, one timed event where nothing else can share their links).
 */
export class ProgramExecutor implements EventTarget, CollectiveListener {
  private readonly queues: Int32Array[];
  private readonly head: Int32Array;
  private readonly pendingDeps: Int32Array;
  private readonly arrivals: Int32Array;
  /** Dependents of task i are depList[depStart[i] .. depStart[i + 1]) (one flat array, not one per task). */
  private readonly depStart: Int32Array;
  private readonly depList: Int32Array;
  private readonly startNs: Float64Array;
  private readonly endNs: Float64Array;
  private done = 0;
  private readonly plans: CollectivePlans;
  /** Set when collectives may run on idle-network time. */
  private readonly windows?: IdleWindows;
  /** Ends the hold of a call run on idle time whose shadows outlast it. */
  private readonly releaser?: EventTarget;
  /** Starts a collective whose start waited for the rest of its instant. */
  private readonly retrier?: EventTarget;
  /** Per task: 1 when it runs as a timed event of its idle-network time. */
  private readonly ranIdle: Uint8Array;

  constructor(
    private readonly program: Program,
    private readonly sim: Simulator,
    private readonly net: FlowStarter,
    collectives: CollectiveService,
    options: ExecutorOptions = {},
  ) {
    this.plans = new CollectivePlans(program, collectives, options.shadowPruning ?? options.idleWindows === true);
    const tasks = program.tasks;
    const n = tasks.length;
    const queueLists: number[][] = Array.from({ length: program.rankCount * STREAMS.length }, () => []);
    const depCount = new Int32Array(n);
    this.pendingDeps = new Int32Array(n);
    for (const t of tasks) {
      const s = streamIndex(t.stream);
      if (t.ordered) for (const r of t.ranks) queueLists[r * STREAMS.length + s].push(t.id);
      this.pendingDeps[t.id] = t.deps.length;
      for (const d of t.deps) depCount[d]++;
    }
    this.depStart = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) this.depStart[i + 1] = this.depStart[i] + depCount[i];
    this.depList = new Int32Array(this.depStart[n]);
    const fill = this.depStart.slice(0, n);
    for (const t of tasks) for (const d of t.deps) this.depList[fill[d]++] = t.id;
    this.queues = queueLists.map((q) => Int32Array.from(q));
    this.head = new Int32Array(this.queues.length);
    this.arrivals = new Int32Array(n);
    this.startNs = new Float64Array(n).fill(-1);
    this.endNs = new Float64Array(n).fill(-1);
    this.ranIdle = new Uint8Array(n);
    if (options.idleWindows) {
      const windows = new IdleWindows(
        program,
        this.plans,
        this.startNs,
        this.endNs,
        new StreamBounds(program, this.queues, this.head),
      );
      this.windows = windows;
      this.releaser = { onEvent: (id: number) => windows.release(id) };
      this.retrier = { onEvent: (id: number) => this.startCollective(id, false) };
    }
  }

  /** Tasks finished so far (of `program.tasks.length`). */
  get tasksDone(): number {
    return this.done;
  }

  /** Runs the whole program and returns its trace. */
  run(): Trace {
    for (let q = 0; q < this.queues.length; q++) if (this.queues[q].length > 0) this.arrive(this.queues[q][0]);
    for (const t of this.program.tasks) if (!t.ordered && t.deps.length === 0) this.start(t.id);
    this.sim.run();
    const tasks = this.program.tasks;
    if (this.done < tasks.length) {
      const stuck = tasks.filter((t) => this.endNs[t.id] < 0).map((t) => t.id);
      throw new DeadlockError(
        stuck,
        stuck.map((id) => tasks[id].label),
      );
    }
    let makespanNs = 0;
    for (let i = 0; i < tasks.length; i++) if (this.endNs[i] > makespanNs) makespanNs = this.endNs[i];
    return { program: this.program, startNs: this.startNs, endNs: this.endNs, makespanNs };
  }

  /** Whether collective `id` ran as one timed event of its idle-network time (with its shadows), after `run`. */
  ranOnIdleTime(id: number): boolean {
    return this.ranIdle[id] === 1;
  }

  /** A local task has run its duration (or a private collective its idle-network time). */
  onEvent(taskId: number): void {
    this.complete(taskId);
  }

  onCollectiveDone(taskId: number): void {
    this.complete(taskId);
  }

  private arrive(id: number): void {
    if (++this.arrivals[id] === this.arrivalsNeeded(id) && this.pendingDeps[id] === 0) this.start(id);
  }

  /** Ranks whose stream must reach the task before it can start (none for unordered tasks). */
  private arrivalsNeeded(id: number): number {
    const t = this.program.tasks[id];
    return t.ordered ? t.ranks.length : 0;
  }

  private start(id: number): void {
    const t = this.program.tasks[id];
    this.startNs[id] = this.sim.now;
    const plan = this.plans.primary[id];
    if (plan) this.startCollective(id, true);
    else this.sim.schedule(t.durationNs, this, id);
  }

  /** Starts collective `id` (its start time set); `mayWait`: it may first let this instant's other events run. */
  private startCollective(id: number, mayWait: boolean): void {
    const plan = this.plans.primary[id]!;
    const windows = this.windows;
    const how = windows ? windows.start(id, this.sim.now, mayWait) : Start.Flows;
    if (how === Start.Wait) {
      this.sim.schedule(0, this.retrier!, id);
      return;
    }
    if (windows && how === Start.Idle) {
      // Its shadows run on idle time with it: no flows at all.
      this.ranIdle[id] = 1;
      this.sim.schedule(windows.idleNs(id), this, id);
      const holdNs = windows.holdsPastEnd(id);
      if (holdNs >= 0) this.sim.schedule(holdNs, this.releaser!, id);
      return;
    }
    new CollectiveRun(this.sim, this.net, plan.phases, plan.bytes, this, id, this.plans.skipRepeats).start();
    // A shadow on private links meets no flow anybody waits for: with shadow pruning it is left out.
    for (const sh of this.plans.runShadows[id] ?? []) {
      if (windows) windows.runStarted(sh.index);
      new CollectiveRun(
        this.sim,
        this.net,
        sh.phases,
        sh.bytes,
        windows ?? IGNORE,
        sh.index,
        this.plans.skipRepeats,
      ).start();
    }
  }

  private complete(id: number): void {
    const t = this.program.tasks[id];
    this.endNs[id] = this.sim.now;
    this.done++;
    if (this.windows && t.collective) this.windows.completed(id, this.ranIdle[id] === 1);
    if (t.ordered) {
      const s = streamIndex(t.stream);
      for (const r of t.ranks) {
        const q = r * STREAMS.length + s;
        const next = ++this.head[q];
        if (next < this.queues[q].length) this.arrive(this.queues[q][next]);
      }
    }
    const end = this.depStart[id + 1];
    for (let i = this.depStart[id]; i < end; i++) {
      const d = this.depList[i];
      if (--this.pendingDeps[d] === 0 && this.arrivals[d] === this.arrivalsNeeded(d)) this.start(d);
    }
  }
}
