import type { CollectiveOp } from '../collectives/types.js';
import { RankGroups } from '../collectives/rankGroups.js';

/**
 * The streams of a GPU, as CUDA streams: work on one stream runs in program order. `compute` also
 * carries blocking collectives (Megatron issues TP all-reduces on the compute stream); `comm` is the
 * data-parallel communicator's stream (gradient buckets, ZeRO gathers); `tp` carries TP collectives
 * that overlap compute; `pp` carries pipeline sends, which are not ordered among themselves; `copy`
 * is host↔device copies (and host work of optimizer offload); `host` is the CPU thread that issues the
 * kernels when the framework's host cost is modelled (a kernel waits for its host task).
 */
/**
 * `cp`: context parallelism's exchanges for attention (ring sends, key/value all-gathers, all-to-alls), on a stream of
 * their own.
 */
export type StreamKind = 'compute' | 'comm' | 'tp' | 'pp' | 'copy' | 'host' | 'cp';

export const STREAMS: readonly StreamKind[] = ['compute', 'comm', 'tp', 'pp', 'copy', 'host', 'cp'];

export function streamIndex(s: StreamKind): number {
  switch (s) {
    case 'compute':
      return 0;
    case 'comm':
      return 1;
    case 'tp':
      return 2;
    case 'pp':
      return 3;
    case 'copy':
      return 4;
    case 'host':
      return 5;
    case 'cp':
      return 6;
  }
}

/** What a task does, for breakdowns and the colours of a timeline. */
export type TaskKind =
  | 'forward'
  | 'backward'
  | 'recompute'
  | 'optimizer'
  | 'dp-allreduce'
  | 'dp-reducescatter'
  | 'dp-allgather'
  | 'tp-collective'
  /**
   * One hop of the context-parallel ring: a rank sends its block of keys and values (and, backward, their gradients)
   * on.
   */
  | 'cp-exchange'
  /**
   * An expert-parallel all-to-all: a layer's tokens dispatched to their experts, or combined back (and the
   * gradients).
   */
  | 'ep-alltoall'
  | 'pp-send'
  | 'zero-gather'
  | 'h2d'
  | 'd2h'
  /** The optimizer step on the host CPU (CPU offload): GPU-side it is waiting, neither compute nor communication. */
  | 'host-optimizer'
  | 'other';

export function isCommunication(kind: TaskKind): boolean {
  return (
    kind !== 'forward' &&
    kind !== 'backward' &&
    kind !== 'recompute' &&
    kind !== 'optimizer' &&
    kind !== 'host-optimizer' &&
    kind !== 'other'
  );
}

/** A collective (or point-to-point transfer) that a task performs over a group of ranks. */
export interface CollectiveWork {
  op: CollectiveOp;
  /**
   * Global GPU ranks taking part, in the group's rank order. The program interns it (`Program.groups`): a task's
   * group is the canonical array of its content, whichever array the caller passed.
   */
  group: readonly number[];
  /** Buffer size as nccl-tests counts it: the whole buffer for all-reduce, the gathered output for all-gather. */
  bytes: number;
  /**
   * Symmetric mode: the same collective of the data-parallel replicas that are not simulated. Their
   * flows run on the network at the same time (so shared links see all the traffic) but nobody waits
   * for them.
   */
  shadowGroups?: readonly (readonly number[])[];
}

/**
 * One unit of work in the step program. A local task runs on one rank's stream; a collective task
 * sits on the comm stream of every rank in its group and starts when all of them reach it.
 */
export interface Task {
  id: number;
  kind: TaskKind;
  label: string;
  stream: StreamKind;
  /** The ranks whose stream this task occupies. */
  ranks: readonly number[];
  /** Tasks that must finish first (like CUDA events between streams). */
  deps: number[];
  /** For local tasks: how long it runs, ns. */
  durationNs: number;
  collective?: CollectiveWork;
  /** Micro-batch index, or -1. */
  microBatch: number;
  /** False for tasks that occupy no stream order (pipeline sends): they start as soon as their deps are done. */
  ordered: boolean;
}

/** The shared "no dependencies" list; `addDep` replaces it instead of mutating it. */
const NO_DEPS: number[] = [];

/** A step as per-rank task graphs. Tasks are kept in the order they were added, which is stream order. */
export class Program {
  readonly tasks: Task[] = [];
  /** The groups of the program's collectives and transfers, by content, with their ids. */
  readonly groups = new RankGroups();
  /** One `[rank]` array per rank, shared by that rank's local tasks (a million tasks, a million arrays otherwise). */
  private readonly single: (readonly number[])[] = [];

  /**
   * @param rankCount GPUs in the job
   * @param simulatedRanks the ranks whose work is in the program (all of them in full fidelity; one
   *   representative per data-parallel class in symmetric mode); statistics average over these.
   */
  constructor(
    readonly rankCount: number,
    readonly simulatedRanks: readonly number[] = Array.from({ length: rankCount }, (_, r) => r),
  ) {}

  /** The one-rank list of `rank`, the same array every time (for tasks that occupy one rank's stream). */
  rankList(rank: number): readonly number[] {
    return (this.single[rank] ??= [rank]);
  }

  /** Adds a task running `durationNs` on one rank's stream. Returns its id. */
  /* eslint-disable-next-line max-params -- called once per task or flow on the hot path; positional, with no object
     per call, until npm run bench shows an options object costs nothing */
  local(
    rank: number,
    stream: StreamKind,
    kind: TaskKind,
    label: string,
    durationNs: number,
    deps: number[] = [],
    microBatch = -1,
  ): number {
    const id = this.tasks.length;
    const ranks = (this.single[rank] ??= [rank]);
    this.tasks.push({
      id,
      kind,
      label,
      stream,
      ranks,
      deps: deps.length === 0 ? NO_DEPS : deps,
      durationNs,
      microBatch,
      ordered: true,
    });
    return id;
  }

  /** Makes task `id` also wait for task `dep` (after it was added). */
  addDep(id: number, dep: number): void {
    const t = this.tasks[id];
    if (t.deps === NO_DEPS) t.deps = [dep];
    else t.deps.push(dep);
  }

  /**
   * Adds a collective over `work.group` on the `stream` (the DP comm stream by default) of `ranks`
   * (the group itself unless only some of its members are simulated). Returns its id.
   */
  /* eslint-disable-next-line max-params -- called once per task or flow on the hot path; positional, with no object
     per call, until npm run bench shows an options object costs nothing */
  collective(
    kind: TaskKind,
    label: string,
    work: CollectiveWork,
    deps: number[] = [],
    microBatch = -1,
    stream: StreamKind = 'comm',
    ranks: readonly number[] = work.group,
  ): number {
    const id = this.tasks.length;
    const collective = this.interned(work);
    this.tasks.push({
      id,
      kind,
      label,
      stream,
      ranks: ranks === work.group ? collective.group : ranks,
      deps,
      durationNs: 0,
      collective,
      microBatch,
      ordered: true,
    });
    return id;
  }

  /** `work` with its group and shadow groups replaced by their canonical arrays (itself when they are already). */
  private interned(work: CollectiveWork): CollectiveWork {
    const group = this.groups.canonical(work.group);
    const shadows = work.shadowGroups;
    const shadowGroups = shadows === undefined ? undefined : this.groups.canonicalList(shadows);
    if (group === work.group && shadowGroups === shadows) return work;
    return { ...work, group, shadowGroups };
  }

  /**
   * Adds a point-to-point transfer over `pair` = [src, dst] that starts as soon as `deps` are done (shown on
   * both ranks' pp lane).
   */
  /* eslint-disable-next-line max-params -- called once per task or flow on the hot path; positional, with no object
     per call, until npm run bench shows an options object costs nothing */
  transfer(
    kind: TaskKind,
    label: string,
    pair: readonly number[],
    bytes: number,
    deps: number[],
    microBatch = -1,
    shadowGroups?: readonly (readonly number[])[],
  ): number {
    const id = this.tasks.length;
    const collective = this.interned({ op: 'send_recv', group: pair, bytes, shadowGroups });
    this.tasks.push({
      id,
      kind,
      label,
      stream: 'pp',
      ranks: collective.group,
      deps,
      durationNs: 0,
      collective,
      microBatch,
      ordered: false,
    });
    return id;
  }
}
