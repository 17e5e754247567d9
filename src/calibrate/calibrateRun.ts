import { SPLIT_K_MIN_K, gemmTile } from '../sim/workload/kernelTime.js';
import { matchGpuPreset } from './applyProfile.js';
import type { Backend } from './backends.js';
import { fitProfile, noiseOf, type FitContext } from './fit.js';
import { MeasurementLog, toRecord } from './measurementLog.js';
import { calibrationPlan } from './plan.js';
import { PROFILE_SCHEMA, PROFILE_SCHEMA_VERSION, writeProfile, type Profile } from './profile.js';
import { statisticFor, type MeasurementRecord, type PlannedItem } from './types.js';
import { lockLog } from './logLock.js';

/**
 * Runs a calibration: every planned measurement not already in the log is taken (off the main thread, by the
 * addon), appended to the log at once, then everything is fitted and the profile written.
 */

export interface CalibrateProgress {
  done: number;
  total: number;
  /** The measurement about to run (undefined when all are done). */
  next?: PlannedItem;
}

export interface CalibrateOptions {
  backend: Backend;
  quick: boolean;
  outPath: string;
  logPath: string;
  resume: boolean;
  toolVersion: string;
  onProgress?: (p: CalibrateProgress) => void;
  /** Checked between measurements: when aborted, the run stops after the one in flight (the log keeps it). */
  signal?: AbortSignal;
}

export interface CalibrateResult {
  profile?: Profile;
  /** Measurements taken now, and found in the log from before (--resume). */
  measured: number;
  resumed: number;
  interrupted: boolean;
  warnings: string[];
}

/**
 * How GEMMs are tiled on the backend's device: the CPU kernel's own tile over its threads, or cuBLAS-like tiles over
 * SMs.
 */
export function gemmLayoutFor(backend: Backend): FitContext['gemmLayout'] {
  if (backend.kind === 'cpu') {
    const tile = backend.gemmTile ?? { m: 96, n: 128 };
    return () => ({ tileM: tile.m, tileN: tile.n, units: backend.machine.computeThreads ?? 1, splitKMinK: 0 });
  }
  const sms = backend.machine.cuda?.devices[0]?.smCount ?? 1;
  return (dtype) => {
    const t = gemmTile(dtype);
    return { tileM: t.m, tileN: t.n, units: sms, splitKMinK: SPLIT_K_MIN_K };
  };
}

/** What the profile says it describes. */
export function describedDevice(backend: Backend): Profile['device'] {
  const cuda = backend.machine.cuda;
  if (backend.kind === 'cuda' && cuda && cuda.devices.length > 0) {
    const d = cuda.devices[0];
    const preset = matchGpuPreset(d.name, d.memoryBytes);
    return { name: d.name, count: cuda.devices.length, ...(preset ? { gpuPreset: preset } : {}) };
  }
  return { name: backend.machine.cpu.model, count: backend.machine.computeThreads ?? 1 };
}

export async function calibrate(o: CalibrateOptions): Promise<CalibrateResult> {
  const unlock = lockLog(o.logPath);
  try {
    return await calibrateLocked(o);
  } finally {
    unlock();
  }
}

async function calibrateLocked(o: CalibrateOptions): Promise<CalibrateResult> {
  const plan = calibrationPlan({ backend: o.backend.kind, quick: o.quick, maxRanks: o.backend.maxRanks });
  const have = new Map<string, MeasurementRecord>();
  let log: MeasurementLog;
  const warnings: string[] = [];
  if (o.resume) {
    const r = MeasurementLog.resume(o.logPath, { backend: o.backend.kind, quick: o.quick, machine: o.backend.machine });
    log = r.log;
    for (const rec of r.parsed.records) have.set(rec.id, rec);
    if (r.parsed.badLines.length > 0)
      warnings.push(
        `${o.logPath}: skipped unreadable line(s) ${r.parsed.badLines.join(', ')} (cut short by an interruption?)`,
      );
  } else {
    log = MeasurementLog.create(o.logPath, {
      backend: o.backend.kind,
      quick: o.quick,
      machine: o.backend.machine,
      startedAt: new Date().toISOString(),
    });
  }
  const resumed = plan.filter((p) => have.has(p.id)).length;
  let done = resumed;
  let measured = 0;
  for (const planned of plan) {
    if (have.has(planned.id)) continue;
    if (o.signal?.aborted) return { measured, resumed, interrupted: true, warnings };
    o.onProgress?.({ done, total: plan.length, next: planned });
    try {
      const record = toRecord(planned, await o.backend.run(planned.item));
      log.append(record);
      have.set(planned.id, record);
      measured++;
    } catch (err) {
      warnings.push(`${planned.id}: ${(err as Error).message}`);
    }
    done++;
  }
  o.onProgress?.({ done, total: plan.length });
  const records = plan.map((p) => have.get(p.id)).filter((r): r is MeasurementRecord => r !== undefined);
  const statistic = statisticFor(o.backend.kind);
  const { fit, warnings: fitWarnings } = fitProfile(records, { gemmLayout: gemmLayoutFor(o.backend), statistic });
  const profile: Profile = {
    schema: PROFILE_SCHEMA,
    schemaVersion: PROFILE_SCHEMA_VERSION,
    createdAt: new Date().toISOString(),
    tool: { name: 'clustersim', version: o.toolVersion },
    backend: o.backend.kind,
    quick: o.quick,
    statistic,
    device: describedDevice(o.backend),
    machine: o.backend.machine,
    noise: noiseOf(records),
    measurements: records.map((r) => ({ id: r.id, group: r.group, ...r.summary })),
    fit,
  };
  writeProfile(o.outPath, profile);
  return { profile, measured, resumed, interrupted: false, warnings: [...warnings, ...fitWarnings] };
}
