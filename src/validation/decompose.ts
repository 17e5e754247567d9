/**
 * Splits iteration times into their parts, so that a model's error can be traced to the part it comes from.
 *
 * With pipeline parallelism off, one training step of an L-layer model over n micro-batches costs
 *   T = a·L·n + b·n + c0 + c1·L
 * where a is the time of one layer for one micro-batch (forward, recomputed forward, backward), b the rest of a
 * micro-batch (embedding, head, loss, per-micro-batch framework work), and c0 + c1·L the once-per-step work
 * (gradient all-reduce and optimizer step, which grow with the parameters and so with L). Rows that share hidden
 * size, tp, dp and micro-batch size but differ in L and n determine the four by least squares. Applied to the
 * measured and to the predicted times of the same rows, it shows which part a prediction misses.
 */

export interface TimedRun {
  layers: number;
  microBatches: number;
  timeMs: number;
}

export interface StepParts {
  /** ms per layer and micro-batch. */
  perLayerMicroBatchMs: number;
  /** ms per micro-batch outside the layers. */
  perMicroBatchMs: number;
  /** Once-per-step ms at `layers` layers: c0 + c1·layers. */
  perStepMs: (layers: number) => number;
}

/** Solves the n×n system m·x = v by Gaussian elimination with partial pivoting; undefined when singular. */
function solve(m: number[][], v: number[]): number[] | undefined {
  const n = v.length;
  const a = m.map((row, i) => [...row, v[i]]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r][col]) > Math.abs(a[pivot][col])) pivot = r;
    if (Math.abs(a[pivot][col]) < 1e-12) return undefined;
    [a[col], a[pivot]] = [a[pivot], a[col]];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = a[r][col] / a[col][col];
      for (let k = col; k <= n; k++) a[r][k] -= f * a[col][k];
    }
  }
  return a.map((row, i) => row[n] / row[i]);
}

/**
 * Least-squares fit of T = a·L·n + b·n + c0 + c1·L over `runs`. Undefined when the runs do not determine the
 * four (fewer than two layer counts, or fewer than two micro-batch counts).
 */
export function fitStepParts(runs: readonly TimedRun[]): StepParts | undefined {
  const features = (r: TimedRun) => [r.layers * r.microBatches, r.microBatches, 1, r.layers];
  const ata = [0, 1, 2, 3].map(() => [0, 0, 0, 0]);
  const atb = [0, 0, 0, 0];
  for (const r of runs) {
    const f = features(r);
    for (let i = 0; i < 4; i++) {
      atb[i] += f[i] * r.timeMs;
      for (let j = 0; j < 4; j++) ata[i][j] += f[i] * f[j];
    }
  }
  const x = solve(ata, atb);
  if (!x) return undefined;
  const [a, b, c0, c1] = x;
  return { perLayerMicroBatchMs: a, perMicroBatchMs: b, perStepMs: (layers) => c0 + c1 * layers };
}
