import { createHash } from 'node:crypto';
import { z } from 'zod';
import { pairSpread } from '../accuracy/pairSpread.js';
import { storedResiduals } from '../accuracy/residualStore.js';
import { KIND_VALUES } from '../accuracy/setupKind.js';
import { VERSION } from '../version.js';
import { shardText, type Shard } from '../sweep/grid.js';
import { estimateErrorPct, rankRows, type PlanResult, type PlanRow } from './search.js';
import { addCounts, addRefused } from './prune.js';
import type { PlanSpace } from './space.js';

/**
 * A part of a sharded plan (`plan --shard i/N --out part.json`) and how `merge` joins the parts: each part plans every
 * N-th layout, so the best `top` of the whole space are among the parts' own best `top`, and ranking their rows
 * together gives the answer of the unsharded plan. A part is read as strictly as a scenario: every field is checked.
 */
export const PLAN_PART_FORMAT = 'clustersim-plan-part/1';

/** What decides a plan's answer: parts of one plan carry the same id (16 hex digits of SHA-256). */
export function planId(basis: {
  raw: unknown;
  sets: readonly string[];
  gpus: number;
  space: PlanSpace;
  top: number;
  profile?: string;
  megatronArgs?: string;
  deepspeedConfig?: string;
}): string {
  return createHash('sha256')
    .update(JSON.stringify({ version: VERSION, ...basis }))
    .digest('hex')
    .slice(0, 16);
}

/** What the text of the merged answer needs besides the rows. */
export interface PlanPartMeta {
  name: string;
  command: string;
  top: number;
}

export interface PlanPart extends PlanPartMeta {
  format: typeof PLAN_PART_FORMAT;
  version: string;
  plan: string;
  shard: string;
  result: PlanResult;
}

export function planPartText(result: PlanResult, meta: PlanPartMeta, id: string, shard: Shard): string {
  const part: PlanPart = {
    format: PLAN_PART_FORMAT,
    version: VERSION,
    plan: id,
    shard: shardText(shard),
    ...meta,
    result,
  };
  return `${JSON.stringify(part)}\n`;
}

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const positiveCount = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const seconds = z.number().finite().nonnegative();
const positiveSeconds = z.number().finite().positive();
const bytes = z.number().finite().nonnegative();
const counts = z.record(z.string(), count);

const layoutSchema = z.strictObject({
  tp: positiveCount,
  cp: positiveCount,
  pp: positiveCount,
  dp: positiveCount,
  microBatch: positiveCount,
  microBatches: positiveCount,
  schedule: z.enum(['1f1b', 'interleaved']),
  virtualStages: positiveCount,
  countEmbeddingAndLoss: z.boolean(),
  ep: positiveCount.optional(),
  dispatcher: z.literal('deepep').optional(),
  moeOverlap: z.literal(true).optional(),
});
const knobsSchema = z.strictObject({
  zero: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]),
  offload: z.enum(['none', 'cpu']),
  recompute: z.enum(['none', 'selective', 'full']),
  sequenceParallel: z.boolean(),
  tpCommOverlap: z.boolean(),
});
const candidateSchema = z.strictObject({ layout: layoutSchema, knobs: knobsSchema });
const kindSchema = z.strictObject(
  Object.fromEntries(Object.entries(KIND_VALUES).map(([k, v]) => [k, z.enum(v as [string, ...string[]])])),
);
const bandSchema = z.strictObject({
  rows: positiveCount,
  matched: z.array(z.enum(Object.keys(KIND_VALUES) as [string, ...string[]])),
  sets: z.array(z.string()),
  edges: z.enum(['p10-p90', 'min-max']),
  lowPct: z.number().finite(),
  medianPct: z.number().finite(),
  highPct: z.number().finite(),
});
const simSchema = z.strictObject({
  stepTimeS: positiveSeconds,
  tokensPerS: z.number().finite().positive(),
  mfu: z.number().finite().nonnegative(),
  peakBytesPerGpu: bytes,
  capacityBytes: z.number().finite().positive(),
  fits: z.boolean(),
  breakdown: z.strictObject({
    computeS: seconds,
    exposedCommS: seconds,
    bubbleS: seconds,
    hostOptimizerS: seconds,
    idleS: seconds,
    commS: seconds,
  }),
  bound: z.string(),
  kind: kindSchema,
});
const setsSchema = z.array(z.string().max(1000)).max(100);
const rowSchema = z.strictObject({
  candidate: candidateSchema,
  sets: setsSchema,
  changed: setsSchema,
  estimateS: positiveSeconds,
  sim: simSchema,
  band: bandSchema.optional(),
  tie: z.boolean(),
  own: z.boolean(),
});
const resultSchema = z.strictObject({
  gpus: positiveCount,
  interrupted: z.boolean(),
  layouts: count,
  layoutsRemoved: counts,
  candidates: count,
  memoryRemoved: counts,
  refused: z.record(z.string(), z.strictObject({ count, example: z.string().max(10_000) })),
  fitting: count,
  estimated: count,
  bounded: count,
  estimateErrors: count,
  rows: z.array(rowSchema).max(100),
  points: z
    .array(z.strictObject({ candidate: candidateSchema, estimateS: positiveSeconds, peakBytesPerGpu: bytes }))
    .max(1_000_000),
  own: rowSchema.optional(),
  estimateErrorPct: z.number().finite().nonnegative(),
  spread: z
    .strictObject({ pairs: positiveCount, groups: positiveCount, pct: z.number().finite().nonnegative() })
    .optional(),
});
const partSchema = z.strictObject({
  format: z.literal(PLAN_PART_FORMAT),
  version: z.string(),
  plan: z.string().regex(/^[0-9a-f]{16}$/),
  shard: z.string().regex(/^\d+\/\d+$/),
  name: z.string().max(1000),
  command: z.string().max(100_000),
  top: z.number().int().min(1).max(100),
  result: resultSchema,
});

/** Parts that cannot be joined; the message names the file and the field. The CLI exits with 2. */
export class PlanPartError extends Error {}

/** Whether a part file's text is a plan's part (rather than a scale sweep's JSON lines). */
export function isPlanPart(text: string): boolean {
  return text.trimStart().startsWith(`{"format":"${PLAN_PART_FORMAT}"`);
}

/** Reads and checks one part. */
export function readPlanPart(file: string, text: string): PlanPart {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new PlanPartError(`${file}: not a plan part (${(err as Error).message})`);
  }
  const parsed = partSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PlanPartError(`${file}: '${issue.path.join('.') || '(the part)'}': ${issue.message}`);
  }
  return parsed.data as unknown as PlanPart;
}

/** Every part of one plan, each once: the same plan id, version and top, shards 1/N … N/N. */
function checkParts(parts: readonly { file: string; part: PlanPart }[]): { count: number } {
  const first = parts[0];
  const n = Number(first.part.shard.split('/')[1]);
  const seen = new Map<number, string>();
  for (const { file, part } of parts) {
    if (part.plan !== first.part.plan || part.version !== first.part.version)
      throw new PlanPartError(
        `${file}: from another plan than ${first.file} (plan ${part.plan} of clustersim ${part.version}, ` +
          `not ${first.part.plan} of ${first.part.version}); merge parts of one plan command`,
      );
    const [i, count] = part.shard.split('/').map(Number);
    if (count !== n || i < 1 || i > n)
      throw new PlanPartError(`${file}: shard ${part.shard} is not one of 1/${n} … ${n}/${n} (as ${first.file} says)`);
    if (seen.has(i)) throw new PlanPartError(`${file}: shard ${part.shard} is also in ${seen.get(i)}`);
    seen.set(i, file);
  }
  const missing = Array.from({ length: n }, (_, k) => k + 1).filter((i) => !seen.has(i));
  if (missing.length > 0)
    throw new PlanPartError(
      `shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${n}`).join(', ')} missing: ` +
        'merge needs every part of the plan',
    );
  return { count: n };
}

/** The answer of the whole plan from its parts, with its meta (from the first part). */
export function mergePlanParts(parts: readonly { file: string; part: PlanPart }[]): {
  result: PlanResult;
  meta: PlanPartMeta;
} {
  if (parts.length === 0) throw new PlanPartError('no part given');
  checkParts(parts);
  const byShard = [...parts].sort((a, b) => Number(a.part.shard.split('/')[0]) - Number(b.part.shard.split('/')[0]));
  const results = byShard.map((p) => p.part.result);
  const { top } = byShard[0].part;
  const spread = pairSpread(storedResiduals());
  const rows = rankRows(
    results.flatMap((r) => r.rows),
    spread,
    top,
  );
  const ownRow: PlanRow | undefined = rows.find((r) => r.own) ?? results[0].own;
  const refused: PlanResult['refused'] = {};
  for (const r of results) addRefused(refused, r.refused);
  const sum = (f: (r: PlanResult) => number) => results.reduce((a, r) => a + f(r), 0);
  const result: PlanResult = {
    gpus: results[0].gpus,
    interrupted: results.some((r) => r.interrupted),
    layouts: sum((r) => r.layouts),
    layoutsRemoved: results.reduce((a, r) => addCounts(a, r.layoutsRemoved), {}),
    candidates: sum((r) => r.candidates),
    memoryRemoved: results.reduce((a, r) => addCounts(a, r.memoryRemoved), {}),
    refused,
    fitting: sum((r) => r.fitting),
    estimated: sum((r) => r.estimated),
    bounded: sum((r) => r.bounded),
    estimateErrors: sum((r) => r.estimateErrors),
    rows,
    points: results.flatMap((r) => r.points),
    ...(ownRow ? { own: ownRow } : {}),
    estimateErrorPct: estimateErrorPct(rows),
    ...(spread ? { spread } : {}),
  };
  if (results.some((r) => r.gpus !== result.gpus)) throw new PlanPartError('the parts plan different GPU counts');
  return { result, meta: { name: byShard[0].part.name, command: byShard[0].part.command, top } };
}
