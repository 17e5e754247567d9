import { streamIndex, STREAMS, type Program } from './types.js';

/**
 * Lower bounds on when a task that has not ended can end, from its stream alone: it runs after every
 * task ahead of it in its stream (on its first rank), so it ends no earlier than now plus the
 * durations of the local tasks queued between the one running and itself (collectives count as 0).
 * Used to prove that no flow can start on some links for a while (`IdleWindows`).
 */
export class StreamBounds {
  /** Per task: its queue (rank × stream of its first rank), -1 for unordered tasks. */
  private readonly queueOf: Int32Array;
  /** Per task: its position in that queue. */
  private readonly posOf: Int32Array;
  /** Per queue: prefix sums of local durations, prefix[k] = sum of positions < k. */
  private readonly prefix: Float64Array[];

  /**
   * @param queues the executor's stream queues (task ids in program order), per rank × stream
   * @param head per queue, the position of its first task not yet ended (updated by the executor)
   */
  constructor(
    program: Program,
    queues: readonly Int32Array[],
    private readonly head: Int32Array,
  ) {
    const n = program.tasks.length;
    this.queueOf = new Int32Array(n).fill(-1);
    this.posOf = new Int32Array(n);
    this.prefix = queues.map((q) => {
      const p = new Float64Array(q.length + 1);
      for (let k = 0; k < q.length; k++) p[k + 1] = p[k] + program.tasks[q[k]].durationNs;
      return p;
    });
    for (const t of program.tasks) {
      if (!t.ordered) continue;
      const q = t.ranks[0] * STREAMS.length + streamIndex(t.stream);
      this.queueOf[t.id] = q;
    }
    queues.forEach((q, qi) =>
      q.forEach((id, pos) => {
        if (this.queueOf[id] === qi) this.posOf[id] = pos;
      }),
    );
  }

  /** Earliest end of task `id`, which has not started, at time `nowNs`. */
  notStartedEndNs(id: number, nowNs: number): number {
    const q = this.queueOf[id];
    if (q < 0) return nowNs;
    const pos = this.posOf[id];
    const h = this.head[q];
    // The task at the head may be running already: only count its duration when it is `id` itself.
    const from = pos > h ? h + 1 : pos;
    const p = this.prefix[q];
    return nowNs + p[pos + 1] - p[from];
  }
}
