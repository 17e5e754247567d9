import type { Dtype } from '../sim/hardware/types.js';

/**
 * Measurement requests and raw results exchanged with the native addon (native/src/item.h). Sizes are
 * elements (GEMM dimensions) or bytes; every time is in seconds.
 */

/** Which microbenchmark implementation runs the measurements. */
export type BackendKind = 'cpu' | 'cuda';

/** Copy directions: host↔device (cuda), device-to-device (cuda), host-to-host memcpy (cpu). */
export type CopyDirection = 'h2d' | 'd2h' | 'd2d' | 'h2h';

/** Collectives the backends measure, named as nccl-tests does. */
export type MeasuredCollective = 'all_reduce' | 'all_gather' | 'reduce_scatter';

export const MEASURED_COLLECTIVES: readonly MeasuredCollective[] = ['all_reduce', 'all_gather', 'reduce_scatter'];

/** C[m×n] = A[m×k]·B[k×n]. */
export interface GemmDims {
  m: number;
  n: number;
  k: number;
}

/** How often to run: `warmup` unmeasured runs, then `repeats` samples of `inner` back-to-back operations each. */
export interface Repetition {
  warmup: number;
  repeats: number;
  inner: number;
  /** CPU backend: compute threads of GEMMs and launches (the backend sets it). */
  threads?: number;
  /** CPU backend: which clock times the samples (the backend sets it; see `CpuClockMode`). */
  clock?: 'wall' | 'thread';
}

/**
 * How the CPU backend times work. `auto`: with one compute thread, by CPU clocks of the threads doing the work,
 * so time the OS gives other processes on a shared machine is not counted (as it would not be on a GPU): a GEMM,
 * launch or memcpy by its thread's clock; a collective by each rank's clock, the slowest rank per sample
 * (barrier waits count, time descheduled does not); a program (GEMMs with copies overlapping on another thread)
 * as the critical path through its ops' thread times. `wall`: everything by the wall clock (a dedicated machine).
 */
export type CpuClockMode = 'auto' | 'wall';

export type BenchItem = Repetition &
  (
    | { kind: 'gemm'; dtype: Dtype; m: number; n: number; k: number }
    | { kind: 'launch' }
    | { kind: 'copy'; direction: CopyDirection; pinned: boolean; bytes: number; footprintBytes?: number }
    | { kind: 'collective'; op: MeasuredCollective; ranks: number; bytes: number; footprintBytes?: number }
    | {
        kind: 'program';
        dtype: Dtype;
        gemms: GemmDims[];
        /** Copy j starts after GEMM `after` finishes (-1: at once), on another stream (cuda) or thread (cpu). */
        copies: { bytes: number; after: number }[];
        /** Direction of the program's copies: d2h (cuda, gradient offload) or h2h (cpu). */
        direction: CopyDirection;
        run: 'both' | 'compute' | 'copy';
      }
  );

/** What the addon returns for one item: seconds per operation, one sample per repeat. */
export interface RawResult {
  samplesS: number[];
  extra: Record<string, number>;
  notes: Record<string, string>;
}

/** One planned measurement: a stable id (the resume key), a group for the progress display, the request. */
export interface PlannedItem {
  id: string;
  group: string;
  item: BenchItem;
}

/**
 * Which value of a measurement's samples stands for it: the median (CUDA, where runs are steady), or the
 * fastest (CPU backend on a shared machine, where other processes only ever add time: best of N, as timeit
 * advises). Calibration and validation use the same one.
 */
export type SampleStatistic = 'median' | 'min';

/** The statistic a backend's measurements are fitted and compared with. */
export function statisticFor(backend: BackendKind): SampleStatistic {
  return backend === 'cpu' ? 'min' : 'median';
}

/** A measurement summarised; spread says how noisy it was. */
export interface MeasurementSummary {
  medianS: number;
  minS: number;
  maxS: number;
  /** (max − min) / median over the samples, in percent. */
  spreadPct: number;
  samples: number;
}

/** One line of the measurement log (JSON lines): request, raw samples and summary. */
export interface MeasurementRecord {
  type: 'measurement';
  id: string;
  group: string;
  item: BenchItem;
  samplesS: number[];
  summary: MeasurementSummary;
  extra?: Record<string, number>;
  notes?: Record<string, string>;
  takenAt: string;
}
