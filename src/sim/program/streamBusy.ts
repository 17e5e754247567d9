import type { Program, Task } from './types.js';

/**
 * How long each rank's streams are busy: the summed durations of the tasks in stream order on each (rank, stream). A
 * stream runs one task at a time, so no step can be shorter than its busiest stream. A collective counts with the
 * least time it can take (`collectiveNs`, e.g. its time on the idle network), or not at all; unordered tasks (pipeline
 * sends) are left out. What is left out only lowers the bound.
 */
export interface StreamBusy {
  /** Work of no micro-batch (the optimizer step, say), ns. */
  fixedNs: number;
  /** The least work any one micro-batch puts on the stream, ns. */
  perMicroBatchNs: number;
}

/**
 * The busy time of each (rank, stream), keyed `rank/stream`, split into the work of no micro-batch and the least of any
 * one micro-batch of the `microBatches` the program holds: the stream of a step with m micro-batches is then busy at
 * least fixed + m × that least, whatever m (each micro-batch runs the same passes on a stage).
 */
export function localBusy(
  program: Program,
  microBatches: number,
  collectiveNs?: (t: Task) => number,
): Map<string, StreamBusy> {
  const fixed = new Map<string, number>();
  const perBatch = new Map<string, Float64Array>();
  const add = (rank: number, t: Task, ns: number) => {
    const key = `${rank}/${t.stream}`;
    if (t.microBatch < 0) fixed.set(key, (fixed.get(key) ?? 0) + ns);
    else {
      let sums = perBatch.get(key);
      if (!sums) perBatch.set(key, (sums = new Float64Array(microBatches)));
      sums[t.microBatch] += ns;
    }
  };
  for (const t of program.tasks) {
    if (!t.ordered) continue;
    if (!t.collective) add(t.ranks[0], t, t.durationNs);
    else if (collectiveNs) {
      const ns = collectiveNs(t);
      for (const r of t.ranks) add(r, t, ns);
    }
  }
  const out = new Map<string, StreamBusy>();
  for (const key of new Set([...fixed.keys(), ...perBatch.keys()])) {
    const sums = perBatch.get(key);
    out.set(key, { fixedNs: fixed.get(key) ?? 0, perMicroBatchNs: sums ? Math.min(...sums) : 0 });
  }
  return out;
}
