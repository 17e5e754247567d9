import { MAX_GPUS } from '../scenario/simulationLimits.js';
import type { SetupKind } from '../accuracy/setupKind.js';
import type { BandJson } from '../accuracy/bandText.js';
/** One GPU count of a scaling sweep. Rows that could not be simulated carry only `gpus`, `status` and `reason`. */
export interface ScaleRow {
  gpus: number;
  /**
   * `ok`: simulated and fits; `oom`: simulated but does not fit in GPU memory; `infeasible`: cannot be simulated;
   * `interrupted`: not simulated, a Ctrl-C stopped the sweep first.
   */
  status: 'ok' | 'oom' | 'infeasible' | 'interrupted';
  /** Why a row is infeasible or interrupted (`not divisible: …`, a scenario problem). */
  reason?: string;
  nodes?: number;
  /** Data-parallel degree at this size (GPUs / (tp × pp)). */
  dp?: number;
  /** Sequences per step at this size. */
  globalBatch?: number;
  stepTimeS?: number;
  samplesPerS?: number;
  tokensPerS?: number;
  /** Throughput over the throughput of the base row (the smallest simulated size). */
  speedup?: number;
  /** Speedup over the ideal (linear) speedup, GPUs / base GPUs: 1 is perfect scaling. */
  efficiency?: number;
  /** Exposed communication time over step time (mean over ranks). */
  exposedCommShare?: number;
  mfu?: number;
  /** Peak memory per GPU, bytes. */
  memoryBytesPerGpu?: number;
  capacityBytes?: number;
  fits?: boolean;
  /** The kind of prediction (accuracy/setupKind.ts) its error band is looked up by; simulated rows only. */
  kind?: SetupKind;
  /**
   * The micro-batch this size ran with, where strong scaling lowered the scenario's to divide the sequences per
   * replica.
   */
  microBatch?: number;
  /** The error band of its step time (accuracy/bandText.ts), filled in when the sweep is printed (`withErrorBands`). */
  errorBand?: BandJson;
}

/** A simulated row: one that has a throughput. */
export function isSimulated(
  row: ScaleRow,
): row is ScaleRow & Required<Pick<ScaleRow, 'samplesPerS' | 'stepTimeS' | 'memoryBytesPerGpu'>> {
  return (row.status === 'ok' || row.status === 'oom') && row.samplesPerS !== undefined;
}

/**
 * The row speedup and efficiency are measured against: the smallest size that was simulated and fits (a size that
 * does not fit is no run to scale from), or the smallest simulated where none fits.
 */
function scalingBase(rows: readonly ScaleRow[]): (ScaleRow & { samplesPerS: number }) | undefined {
  const simulated = rows.filter(isSimulated);
  return simulated.find((r) => r.status === 'ok') ?? simulated[0];
}

/** The GPU count speedup and efficiency are measured against (`scalingBase`); undefined when no size was simulated. */
export function scalingBaseGpus(rows: readonly ScaleRow[]): number | undefined {
  return scalingBase(rows)?.gpus;
}

/**
 * The GPU count speedup and efficiency are measured against when it is not the sweep's smallest size that can be
 * built: sizes below it were interrupted before they were simulated, or did not fit. Undefined otherwise.
 */
export function movedScalingBase(rows: readonly ScaleRow[]): number | undefined {
  const base = scalingBaseGpus(rows);
  if (base === undefined) return undefined;
  return rows.some((r) => (r.status === 'interrupted' || r.status === 'oom') && r.gpus < base) ? base : undefined;
}

/**
 * Fills in speedup and efficiency against the first simulated row (the base). Throughput is the measure
 * in both modes: with strong scaling the batch is fixed, so the throughput ratio is the step-time ratio
 * t_base / t; with weak scaling the batch grows with the GPUs and only throughput is comparable.
 * Efficiency = speedup / (GPUs / base GPUs).
 */
export function withScaling(rows: readonly ScaleRow[]): ScaleRow[] {
  const base = scalingBase(rows);
  return rows.map((r) => {
    if (!base || !isSimulated(r)) return { ...r };
    const speedup = r.samplesPerS / base.samplesPerS;
    return { ...r, speedup, efficiency: speedup / (r.gpus / base.gpus) };
  });
}

/**
 * Reads a GPU-count list: `8,16,32`, or a doubling range `8..1024` (8, 16, …, 1024), or a mix. Returns
 * sorted distinct counts; throws `RangeError` with a message for anything else.
 */
export function parseGpuCounts(text: string): number[] {
  const out = new Set<number>();
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const range = /^(\d+)\s*\.\.\s*(\d+)$/.exec(part);
    if (range) {
      const [a, b] = [Number(range[1]), Number(range[2])];
      if (a < 1 || b < a)
        throw new RangeError(`'${part}': a range runs from a count ≥ 1 up to a larger one, e.g. 8..1024`);
      if (b > MAX_GPUS) throw new RangeError(`'${part}': ${b} is more than the ${MAX_GPUS} GPUs the simulator takes`);
      for (let g = a; g <= b; g *= 2) out.add(g);
      continue;
    }
    if (!/^\d+$/.test(part) || Number(part) < 1)
      throw new RangeError(`'${part}' is not a GPU count; write e.g. 8,16,32 or 8..1024 (doubling)`);
    if (Number(part) > MAX_GPUS)
      throw new RangeError(`'${part}' is more than the ${MAX_GPUS} GPUs the simulator takes`);
    out.add(Number(part));
  }
  if (out.size === 0) throw new RangeError('name at least one GPU count, e.g. 8,16,32');
  return [...out].sort((a, b) => a - b);
}
