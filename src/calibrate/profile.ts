import { fileErrorReason, fileWriteErrorReason } from '../fileErrors.js';
import { writeFileAtomic } from '../atomicWrite.js';
import { z } from 'zod';
import type { MachineInfo } from './backends.js';
import type { AlphaBetaFit } from './fitAlphaBeta.js';
import type { GemmFit } from './fitGemm.js';
import type { Dtype } from '../sim/hardware/types.js';
import type { BackendKind, MeasuredCollective, SampleStatistic } from './types.js';
import { readInputText } from '../inputFile.js';

/**
 * The calibration profile (`calibrate --out profile.json`): the machine, a summary of every measurement, how
 * noisy they were, and the fitted constants `simulate --profile` and `validate` use. Versioned; read back
 * through a schema so a hand-edited or foreign file gets a message naming the field.
 */

export const PROFILE_SCHEMA = 'clustersim.profile';
export const PROFILE_SCHEMA_VERSION = 1;

export interface CollectiveFit extends AlphaBetaFit {
  op: MeasuredCollective;
  ranks: number;
  /** nccl-tests bus bandwidth of the fitted line: algbw × 2(n−1)/n (all-reduce) or × (n−1)/n. */
  busBandwidthGBps: number;
}

export interface ProfileFit {
  /** Per-kernel overhead on a stream of back-to-back launches (cuda) or one pool dispatch (cpu), seconds. */
  launchS: number;
  /** cuda: time of the launch call on the host alone, seconds. */
  launchHostS?: number;
  /** Bytes read + written per second by a streaming kernel (device copy, or memcpy on the CPU), GB/s. */
  memoryBandwidthGBps: number;
  /** α–β per copy direction: h2h (cpu); d2d, h2d-pinned, d2h-pinned, h2d-pageable, d2h-pageable (cuda). */
  copies: Record<string, AlphaBetaFit>;
  gemm: Partial<Record<Dtype, GemmFit>>;
  collectives: CollectiveFit[];
  /** Backward GEMMs alone, gradient copies alone, and both overlapped (one step), seconds. */
  overlap?: { computeS: number; copyS: number; bothS: number; slowdownPct: number };
}

export interface ProfileMeasurement {
  id: string;
  group: string;
  medianS: number;
  minS: number;
  maxS: number;
  spreadPct: number;
  samples: number;
}

export interface Profile {
  schema: typeof PROFILE_SCHEMA;
  schemaVersion: number;
  createdAt: string;
  tool: { name: string; version: string };
  backend: BackendKind;
  quick: boolean;
  /** Which value of each measurement's samples was fitted (validate compares the same one). */
  statistic: SampleStatistic;
  /** What the constants describe: the GPU model (or CPU), how many, and the matching preset if any. */
  device: { name: string; count: number; gpuPreset?: string };
  machine: MachineInfo;
  noise: { medianSpreadPct: number; p90SpreadPct: number; worstSpreadPct: number };
  measurements: ProfileMeasurement[];
  fit: ProfileFit;
}

/** A profile file that is missing, unreadable or not a valid profile. */
export class ProfileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProfileError';
  }
}

const positive = z.number().positive().finite();
const nonNegative = z.number().nonnegative().finite();
// What the simulator takes from a fit, within what any machine measures: a latency under a second, a rate from
// 1 MB/s to 1 PB/s, a GEMM ceiling up to 100 times the fastest GPU's. A hand-edited 1e300 would overflow the step.
const latencyS = z.number().nonnegative().max(1);
const rateGBps = z.number().min(1e-3).max(1e6);
const residualsSchema = z.object({ medianPct: nonNegative, worstPct: nonNegative, rmsPct: nonNegative });
const alphaBetaSchema = z.object({
  latencyS,
  bandwidthGBps: rateGBps,
  points: z.number().int().positive(),
  minBytes: positive,
  maxBytes: positive,
  residuals: residualsSchema,
});
const gemmSchema = z.object({
  tileM: z.number().int().positive(),
  tileN: z.number().int().positive(),
  units: z.number().int().positive(),
  splitKMinK: z.number().int().nonnegative(),
  ceilingTflops: z.number().min(1e-6).max(1e6),
  smallKHalf: z.number().nonnegative().max(1e9),
  corrections: z
    .array(z.object({ m: positive, n: positive, k: positive, ratio: z.number().min(1e-3).max(1e3) }))
    .optional(),
  points: z.number().int().positive(),
  residuals: residualsSchema,
  leaveOneOutPct: z.object({ model: nonNegative, corrected: nonNegative }),
});
const dtypeSchema = z.enum(['fp32', 'tf32', 'fp16', 'bf16', 'fp8']);

export const profileSchema = z
  .object({
    schema: z.literal(PROFILE_SCHEMA),
    schemaVersion: z.literal(PROFILE_SCHEMA_VERSION),
    createdAt: z.string(),
    tool: z.object({ name: z.string(), version: z.string() }),
    backend: z.enum(['cpu', 'cuda']),
    quick: z.boolean(),
    statistic: z.enum(['median', 'min']),
    device: z.object({ name: z.string(), count: z.number().int().positive(), gpuPreset: z.string().optional() }),
    machine: z
      .object({
        hostname: z.string(),
        os: z.string(),
        arch: z.string(),
        node: z.string(),
        // memoryBytes is a CPU device's memory capacity (applyProfile.ts); computeThreads its GEMM units.
        cpu: z
          .object({ model: z.string(), logicalCores: z.number().int().positive(), memoryBytes: positive })
          .passthrough(),
        computeThreads: z.number().int().positive().optional(),
        cpuClock: z.enum(['auto', 'wall']).optional(),
      })
      .passthrough(),
    noise: z.object({ medianSpreadPct: nonNegative, p90SpreadPct: nonNegative, worstSpreadPct: nonNegative }),
    measurements: z.array(
      z.object({
        id: z.string(),
        group: z.string(),
        medianS: positive,
        minS: positive,
        maxS: positive,
        spreadPct: nonNegative,
        samples: z.number().int().positive(),
      }),
    ),
    fit: z.object({
      launchS: latencyS,
      launchHostS: latencyS.optional(),
      memoryBandwidthGBps: rateGBps,
      copies: z.record(alphaBetaSchema),
      gemm: z.record(dtypeSchema, gemmSchema),
      collectives: z.array(
        alphaBetaSchema.extend({
          op: z.enum(['all_reduce', 'all_gather', 'reduce_scatter']),
          ranks: z.number().int().min(2),
          busBandwidthGBps: rateGBps,
        }),
      ),
      overlap: z
        .object({ computeS: positive, copyS: positive, bothS: positive, slowdownPct: z.number().finite() })
        .optional(),
    }),
  })
  .superRefine((p, ctx) => {
    // What every profile calibrate writes holds (fit.ts); without it the simulator would fall back on placeholders.
    if (Object.keys(p.fit.gemm).length === 0)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['fit', 'gemm'],
        message: 'no GEMM fit (a profile has at least one dtype)',
      });
    if (p.backend === 'cpu' && !p.fit.gemm.fp32)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['fit', 'gemm', 'fp32'],
        message: 'a cpu profile needs its fp32 GEMM fit',
      });
  });

/** What a JSON value that should have been a profile holds, in a few words. */
function foundInstead(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === 'string')
    return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value !== 'object') return `the ${typeof value} ${String(value)}`;
  const record = value as Record<string, unknown>;
  if ('schema' in record) return `an object with "schema": ${JSON.stringify(record.schema)}`;
  const keys = Object.keys(record);
  if (keys.length === 0) return 'an empty object';
  return (
    'an object with the fields ' +
    `${keys.slice(0, 6).join(', ')}${keys.length > 6 ? `, … (${keys.length} in all)` : ''}, and no "schema"`
  );
}

/** Checks a parsed JSON value against the schema; problems are listed as `path: message`. */
export function parseProfile(value: unknown, source: string): Profile {
  const header = value as { schema?: unknown; schemaVersion?: unknown } | null;
  if (header === null || typeof header !== 'object' || Array.isArray(header) || header.schema !== PROFILE_SCHEMA) {
    throw new ProfileError(
      `${source} is not a clustersim calibration profile: ` +
        `it holds ${foundInstead(value)}, but a profile is a JSON object with "schema": "${PROFILE_SCHEMA}", ` +
        'the fitted constants of a machine; make one with `clustersim calibrate --out profile.json`',
    );
  }
  if (header.schemaVersion !== PROFILE_SCHEMA_VERSION) {
    const newer = typeof header.schemaVersion === 'number' && header.schemaVersion > PROFILE_SCHEMA_VERSION;
    throw new ProfileError(
      `${source}: profile schema version ${String(header.schemaVersion)} is not supported ` +
        `(this version of clustersim reads ${PROFILE_SCHEMA_VERSION}); ` +
        (newer
          ? 'it was written by a newer clustersim: upgrade clustersim to read it'
          : 'calibrate again with this version'),
    );
  }
  const r = profileSchema.safeParse(value);
  if (!r.success) {
    const problems = r.error.issues.slice(0, 6).map((i) => `  ${i.path.join('.') || '(top)'}: ${i.message}`);
    throw new ProfileError(`${source} is not a valid clustersim profile:\n${problems.join('\n')}`);
  }
  return r.data as unknown as Profile;
}

export function readProfile(path: string): Profile {
  let text: string;
  try {
    text = readInputText(path);
  } catch (err) {
    throw new ProfileError(`cannot read profile ${path}: ${fileErrorReason(err)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // The measurement log is JSON lines that start with its header: a common mix-up with the profile.
    if (text.startsWith('{"type":"header","schema":"clustersim.calibration-log"')) {
      throw new ProfileError(
        `${path} is the measurement log of a calibration, not its profile: give the file calibrate wrote with --out ` +
          '(profile.json), or make it from this log with the same calibrate command and --resume',
      );
    }
    throw new ProfileError(`${path} is not JSON: ${(err as Error).message}`);
  }
  return parseProfile(value, path);
}

/** Writes a profile whole or not at all; a failed write is a {@link ProfileError} in a user's words. */
export function writeProfile(path: string, profile: Profile): void {
  try {
    writeFileAtomic(path, `${JSON.stringify(profile, null, 2)}\n`);
  } catch (err) {
    throw new ProfileError(
      `cannot write the profile ${path}: ${fileWriteErrorReason(err, path)}; ` +
        'the measurements are kept in the log, so the same command with --resume writes it without measuring again',
    );
  }
}
