import { withScaling, type ScaleRow } from './scaleMath.js';
import { setupKindProblem } from '../accuracy/setupKind.js';
import type { ScaleMode, ScaleSeries } from './scale.js';
import { MAX_SWEEP_POINTS, shardOf } from './grid.js';
import { MAX_GPUS } from '../scenario/simulationLimits.js';
import { POINT_FORMAT, type PointRecord } from './records.js';
import { commSettingsProblem, commSettingsText, pickCommSettings } from './commSettings.js';

/** Parts that cannot be joined; the message names the file and line at fault. The CLI exits with 2. */
export class MergeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MergeError';
  }
}

/** One part as read: its file name (for messages) and its text. */
export interface PartText {
  file: string;
  text: string;
}

/** The sweep the parts make up: the same series an unsharded run gives. */
export interface MergedSweep {
  sweep: string;
  mode: ScaleMode;
  series: ScaleSeries[];
  points: number;
}

const STATUSES = new Set(['ok', 'oom', 'infeasible']);
const ROW_NUMBERS = [
  'nodes',
  'dp',
  'globalBatch',
  'stepTimeS',
  'samplesPerS',
  'tokensPerS',
  'exposedCommShare',
  'mfu',
  'memoryBytesPerGpu',
  'capacityBytes',
] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;

/**
 * What each number of a row may be: whole counts, positive rates, shares of 0 to 1, byte counts. A simulated row
 * ('ok', 'oom') has them all; an infeasible one only the counts it got to. A value JSON cannot carry comes back as
 * null (NaN) or Infinity (1e309): both are refused, as a scenario's would be.
 */
const WHOLE = { expected: 'a whole number of at least 1', ok: (x: number) => Number.isSafeInteger(x) && x >= 1 };
const RATE = { expected: 'a finite rate above 0', ok: (x: number) => Number.isFinite(x) && x > 0 };
const ROW_FIELDS: Record<(typeof ROW_NUMBERS)[number], { expected: string; ok: (x: number) => boolean }> = {
  nodes: WHOLE,
  dp: WHOLE,
  globalBatch: WHOLE,
  stepTimeS: { expected: 'a finite number of seconds above 0', ok: (x) => Number.isFinite(x) && x > 0 },
  samplesPerS: RATE,
  tokensPerS: RATE,
  exposedCommShare: { expected: 'a share from 0 to 1', ok: (x) => x >= 0 && x <= 1 },
  mfu: { expected: 'a finite number of at least 0', ok: (x) => Number.isFinite(x) && x >= 0 },
  memoryBytesPerGpu: { expected: 'a finite number of bytes of at least 0', ok: (x) => Number.isFinite(x) && x >= 0 },
  capacityBytes: { expected: 'a finite number of bytes above 0', ok: (x) => Number.isFinite(x) && x > 0 },
};

function checkRowNumbers(row: Record<string, unknown>, where: string): void {
  const simulated = row.status !== 'infeasible';
  for (const f of ROW_NUMBERS) {
    const rule = ROW_FIELDS[f];
    const value = row[f];
    if (value === undefined && !simulated) continue;
    if (typeof value !== 'number' || !rule.ok(value)) {
      const shown =
        value === undefined
          ? 'missing'
          : typeof value === 'number' && !Number.isFinite(value)
            ? String(value)
            : JSON.stringify(value);
      throw new MergeError(
        `${where}: 'row.${f}' is ${shown}; ` +
          `expected ${rule.expected}${simulated ? ` in a row of status '${String(row.status)}'` : ''}`,
      );
    }
  }
}

/** Checks one parsed line field by field; throws a `MergeError` naming the first field that is wrong. */
function checkRecord(v: Record<string, unknown>, where: string): PointRecord {
  const bad = (field: string, expected: string) =>
    new MergeError(`${where}: '${field}' is ${JSON.stringify(v[field]) ?? 'missing'}; expected ${expected}`);
  for (const f of ['version', 'sweep', 'source', 'name', 'shard'])
    if (typeof v[f] !== 'string') throw bad(f, 'a string');
  if (v.mode !== 'strong' && v.mode !== 'weak') throw bad('mode', "'strong' or 'weak'");
  if (!Array.isArray(v.scenarios) || v.scenarios.length === 0 || !v.scenarios.every((s) => typeof s === 'string'))
    throw bad('scenarios', 'a list of scenario paths');
  if (
    !Array.isArray(v.gpuCounts) ||
    v.gpuCounts.length === 0 ||
    !v.gpuCounts.every((g, i, all) => isCount(g, 1) && g <= MAX_GPUS && (i === 0 || g > all[i - 1]))
  ) {
    throw bad('gpuCounts', `a rising list of GPU counts, each at most ${MAX_GPUS}`);
  }
  const total = v.scenarios.length * v.gpuCounts.length;
  if (total > MAX_SWEEP_POINTS)
    throw new MergeError(
      `${where}: declares ${v.scenarios.length} scenarios × ${v.gpuCounts.length} GPU counts = ${total} points, ` +
        `more than the ${MAX_SWEEP_POINTS} a sweep may have`,
    );
  if (!isCount(v.point, 0) || v.point >= total) throw bad('point', `a point index from 0 to ${total - 1}`);
  const perSeries = v.gpuCounts.length;
  if (v.series !== Math.floor(v.point / perSeries))
    throw bad('series', `${Math.floor(v.point / perSeries)} for point ${v.point + 1}`);
  if (v.gpus !== v.gpuCounts[v.point % perSeries])
    throw bad('gpus', `${v.gpuCounts[v.point % perSeries]} for point ${v.point + 1}`);
  if (v.source !== v.scenarios[v.series])
    throw bad('source', `${JSON.stringify(v.scenarios[v.series])} for series ${v.series}`);
  for (const f of ['tp', 'pp']) if (!isCount(v[f], 1)) throw bad(f, 'a positive whole number');
  if (v.cp !== undefined && !isCount(v.cp, 2))
    throw bad('cp', 'a whole number of at least 2, or no cp (context parallelism off)');
  const comm = commSettingsProblem(v);
  if (comm) throw bad(...comm);
  const row = v.row;
  if (!isObject(row)) throw bad('row', 'an object');
  if (row.gpus !== v.gpus)
    throw new MergeError(
      `${where}: 'row.gpus' is ${JSON.stringify(row.gpus)}; expected ${v.gpus}, the point's GPU count`,
    );
  if (typeof row.status !== 'string' || !STATUSES.has(row.status))
    throw new MergeError(
      `${where}: 'row.status' is ${JSON.stringify(row.status)}; expected 'ok', 'oom' or 'infeasible'`,
    );
  checkRowNumbers(row, where);
  if (row.fits !== undefined && typeof row.fits !== 'boolean')
    throw new MergeError(`${where}: 'row.fits' is ${JSON.stringify(row.fits)}; expected true or false`);
  if (row.status !== 'infeasible' && row.fits !== (row.status === 'ok'))
    throw new MergeError(
      `${where}: 'row.fits' is ${JSON.stringify(row.fits) ?? 'missing'}; ` +
        `expected ${row.status === 'ok'} for status '${row.status}'`,
    );
  if (row.status === 'infeasible' && typeof row.reason !== 'string')
    throw new MergeError(`${where}: 'row.reason' is missing; an infeasible row says why`);
  const kindProblem = row.kind === undefined ? undefined : setupKindProblem(row.kind);
  if (kindProblem) throw new MergeError(`${where}: 'row.kind' ${kindProblem}`);
  if (row.microBatch !== undefined && !isCount(row.microBatch, 1))
    throw new MergeError(
      `${where}: 'row.microBatch' is ${JSON.stringify(row.microBatch)}; expected a whole number of at least 1`,
    );
  if (row.reason !== undefined && typeof row.reason !== 'string')
    throw new MergeError(`${where}: 'row.reason' is ${JSON.stringify(row.reason)}; expected text`);
  return v as unknown as PointRecord;
}

/** Reads one line; throws a `MergeError` naming the file and line when it is not a point of a sweep. */
function readLine(line: string, where: string): PointRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new MergeError(
      `${where}: not valid JSON (${(err as Error).message}); ` +
        'each line must be one object written by clustersim scale --shard',
    );
  }
  if (!isObject(value) || value.format !== POINT_FORMAT) {
    const found = isObject(value)
      ? value.format === undefined
        ? 'an object without "format"'
        : `"format": ${JSON.stringify(value.format)}`
      : Array.isArray(value)
        ? 'a list'
        : JSON.stringify(value);
    throw new MergeError(
      `${where}: not a point of a clustersim scale sweep (expected "format": "${POINT_FORMAT}", found ${found}); ` +
        'merge takes the files clustersim scale --shard writes',
    );
  }
  return checkRecord(value, where);
}

const sameList = (a: readonly unknown[], b: readonly unknown[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Why record `r` is not of the same sweep as `ref`, in words. */
function sweepDifference(r: PointRecord, ref: PointRecord): string {
  if (r.version !== ref.version) return `made by clustersim ${r.version}, the other by ${ref.version}`;
  if (r.mode !== ref.mode) return `${r.mode} scaling, the other ${ref.mode}`;
  if (!sameList(r.scenarios, ref.scenarios))
    return `scenarios ${r.scenarios.join(', ')}, the other ${ref.scenarios.join(', ')}`;
  if (!sameList(r.gpuCounts, ref.gpuCounts))
    return `GPU counts ${r.gpuCounts.join(',')}, the other ${ref.gpuCounts.join(',')}`;
  return (
    `same files, mode and GPU counts, but the scenario contents or --set overrides differ (sweep ${r.sweep}, ` +
    `the other ${ref.sweep})`
  );
}

/**
 * What a series holds fixed, in words: `tp 8 × pp 2`, or `tp 8 × cp 2 × pp 2` with context parallelism, then the
 * communication settings that apply (`, cpCommType all_gather`).
 */
const splitText = (r: PointRecord) => {
  const comm = commSettingsText(r);
  return `tp ${r.tp}${r.cp !== undefined ? ` × cp ${r.cp}` : ''} × pp ${r.pp}${comm ? `, ${comm}` : ''}`;
};

/** A point as the docs count them, from 1 (records hold them from 0). */
const pointName = (r: Pick<PointRecord, 'point' | 'source' | 'gpus'>) =>
  `point ${r.point + 1} (${r.source} at ${r.gpus} GPUs)`;

/**
 * Joins the parts of a sharded sweep into the series an unsharded run prints. Checks that every line
 * is a point record, that all come from one sweep (same `sweep` id), that no point appears twice and
 * none is missing; blank lines are skipped. Speedup and efficiency are computed here, over the whole
 * series, exactly as the unsharded run computes them, so the output is the same.
 */
export function mergeParts(parts: readonly PartText[]): MergedSweep {
  let ref: { record: PointRecord; where: string } | undefined;
  // By point index; a Map, so that what a header declares costs nothing until points arrive.
  const byPoint = new Map<number, { record: PointRecord; where: string }>();
  let total = 0;
  let split: { count: number; where: string; shard: string } | undefined;
  const firstOfSeries = new Map<number, { record: PointRecord; where: string }>();
  for (const part of parts) {
    const lines = part.text.split(/\r?\n/);
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      const where = `${part.file} line ${i + 1}`;
      const record = readLine(line, where);
      if (!ref) {
        ref = { record, where };
        total = record.scenarios.length * record.gpuCounts.length;
      } else if (record.sweep !== ref.record.sweep) {
        throw new MergeError(
          `${where}: belongs to a different sweep than ${ref.where}: ${sweepDifference(record, ref.record)}`,
        );
      }
      // Parts of one sweep must be cut the same way: --shard i/N with one N.
      const cut = /^\d+\/(\d+)$/.exec(record.shard);
      if (cut && split && Number(cut[1]) !== split.count) {
        throw new MergeError(
          `${where}: a part of ${cut[1]} (--shard ${record.shard}), but ${split.where} is a part of ${split.count} ` +
            `(--shard ${split.shard}); run every part with the same N in --shard i/N`,
        );
      }
      if (cut && !split) split = { count: Number(cut[1]), where, shard: record.shard };
      const seen = byPoint.get(record.point);
      if (seen)
        throw new MergeError(
          `${where}: ${pointName(record)} is already in ${seen.where}; ` +
            'every point must come from exactly one part (was a part given twice?)',
        );
      const first = firstOfSeries.get(record.series);
      if (first && (first.record.name !== record.name || splitText(first.record) !== splitText(record))) {
        throw new MergeError(
          `${where}: scenario ${record.series} is '${record.name}' with ${splitText(record)}, ` +
            `but ${first.where} says '${first.record.name}' with ${splitText(first.record)}`,
        );
      }
      byPoint.set(record.point, { record, where });
      if (!first) firstOfSeries.set(record.series, { record, where });
    });
  }
  if (!ref) {
    const names = parts.map((p) => p.file).join(', ');
    throw new MergeError(
      `no points in ${names || 'the input'}: every part is empty ` +
        '(a part is empty only when a sweep has fewer points than parts)',
    );
  }
  const head = ref.record;
  const perSeries = head.gpuCounts.length;
  const missing: number[] = [];
  for (let point = 0; point < total; point++) if (!byPoint.has(point)) missing.push(point);
  if (missing.length > 0) {
    // Every part was cut with the same N (checked above), so each missing point has one part it belongs to.
    const count = split?.count;
    const list = missing.slice(0, 5).map((point) => {
      const name = pointName({
        point,
        source: head.scenarios[Math.floor(point / perSeries)],
        gpus: head.gpuCounts[point % perSeries],
      });
      return count ? `${name}, part ${shardOf(point, count)}/${count}` : name;
    });
    const more = missing.length > list.length ? `, and ${missing.length - list.length} more` : '';
    throw new MergeError(
      `missing ${missing.length} of ${total} points of the sweep: ${list.join('; ')}${more}. ` +
        'Is a part missing, or was one cut short?',
    );
  }
  const series: ScaleSeries[] = head.scenarios.map((source, s) => {
    const entries = head.gpuCounts.map((_, g) => byPoint.get(s * perSeries + g)!.record);
    const rows: ScaleRow[] = entries.map((r) => r.row);
    const { name, tp, pp, cp } = entries[0];
    return {
      name,
      source,
      mode: head.mode,
      tp,
      pp,
      ...(cp !== undefined ? { cp } : {}),
      ...pickCommSettings(entries[0]),
      rows: withScaling(rows),
    };
  });
  return { sweep: head.sweep, mode: head.mode, series, points: total };
}
