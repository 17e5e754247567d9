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
 * How the CPU backend times work. `auto`: work that runs on one thread (GEMMs and launches with one compute
 * thread, memcpy, GEMM chains) is timed with that thread's CPU clock, so time the OS gives other processes on a
 * shared machine is not counted, as it would not be on a GPU; work on several threads (collectives, copies
 * overlapping compute) with the wall clock. `wall`: everything with the wall clock (a dedicated machine).
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

/** A measurement summarised: medians are what the fit uses; spread says how noisy it was. */
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
