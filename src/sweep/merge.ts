import { withScaling, type ScaleRow } from './scaleMath.js';
import { setupKindProblem } from '../accuracy/setupKind.js';
import type { ScaleMode, ScaleSeries } from './scale.js';
import { shardOf } from './grid.js';
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
const ROW_NUMBERS = ['nodes', 'dp', 'globalBatch', 'stepTimeS', 'samplesPerS', 'tokensPerS', 'exposedCommShare', 'mfu', 'memoryBytesPerGpu', 'capacityBytes'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;

/** Checks one parsed line field by field; throws a `MergeError` naming the first field that is wrong. */
function checkRecord(v: Record<string, unknown>, where: string): PointRecord {
  const bad = (field: string, expected: string) => new MergeError(`${where}: '${field}' is ${JSON.stringify(v[field]) ?? 'missing'}; expected ${expected}`);
  for (const f of ['version', 'sweep', 'source', 'name', 'shard']) if (typeof v[f] !== 'string') throw bad(f, 'a string');
  if (v.mode !== 'strong' && v.mode !== 'weak') throw bad('mode', "'strong' or 'weak'");
  if (!Array.isArray(v.scenarios) || v.scenarios.length === 0 || !v.scenarios.every((s) => typeof s === 'string')) throw bad('scenarios', 'a list of scenario paths');
  if (!Array.isArray(v.gpuCounts) || v.gpuCounts.length === 0 || !v.gpuCounts.every((g) => isCount(g, 1))) throw bad('gpuCounts', 'a list of GPU counts');
  const total = v.scenarios.length * v.gpuCounts.length;
  if (!isCount(v.point, 0) || v.point >= total) throw bad('point', `a point index from 0 to ${total - 1}`);
  const perSeries = v.gpuCounts.length;
  if (v.series !== Math.floor(v.point / perSeries)) throw bad('series', `${Math.floor(v.point / perSeries)} for point ${v.point + 1}`);
  if (v.gpus !== v.gpuCounts[v.point % perSeries]) throw bad('gpus', `${v.gpuCounts[v.point % perSeries]} for point ${v.point + 1}`);
  if (v.source !== v.scenarios[v.series]) throw bad('source', `${JSON.stringify(v.scenarios[v.series])} for series ${v.series}`);
  for (const f of ['tp', 'pp']) if (!isCount(v[f], 1)) throw bad(f, 'a positive whole number');
  if (v.cp !== undefined && !isCount(v.cp, 2)) throw bad('cp', 'a whole number of at least 2, or no cp (context parallelism off)');
  const comm = commSettingsProblem(v);
  if (comm) throw bad(...comm);
  const row = v.row;
  if (!isObject(row)) throw bad('row', 'an object');
  if (row.gpus !== v.gpus) throw new MergeError(`${where}: 'row.gpus' is ${JSON.stringify(row.gpus)}; expected ${v.gpus}, the point's GPU count`);
  if (typeof row.status !== 'string' || !STATUSES.has(row.status)) throw new MergeError(`${where}: 'row.status' is ${JSON.stringify(row.status)}; expected 'ok', 'oom' or 'infeasible'`);
  for (const f of ROW_NUMBERS) {
    // A NaN written by JSON.stringify comes back as null.
    if (row[f] !== undefined && row[f] !== null && typeof row[f] !== 'number') throw new MergeError(`${where}: 'row.${f}' is ${JSON.stringify(row[f])}; expected a number`);
  }
  if (row.fits !== undefined && typeof row.fits !== 'boolean') throw new MergeError(`${where}: 'row.fits' is ${JSON.stringify(row.fits)}; expected true or false`);
  const kindProblem = row.kind === undefined ? undefined : setupKindProblem(row.kind);
  if (kindProblem) throw new MergeError(`${where}: 'row.kind' ${kindProblem}`);
  if (row.reason !== undefined && typeof row.reason !== 'string') throw new MergeError(`${where}: 'row.reason' is ${JSON.stringify(row.reason)}; expected text`);
  return v as unknown as PointRecord;
}

/** Reads one line; throws a `MergeError` naming the file and line when it is not a point of a sweep. */
function readLine(line: string, where: string): PointRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new MergeError(`${where}: not valid JSON (${(err as Error).message}); each line must be one object written by clustersim scale --shard`);
  }
  if (!isObject(value) || value.format !== POINT_FORMAT) {
    const found = isObject(value) ? (value.format === undefined ? 'an object without "format"' : `"format": ${JSON.stringify(value.format)}`) : Array.isArray(value) ? 'a list' : JSON.stringify(value);
    throw new MergeError(`${where}: not a point of a clustersim scale sweep (expected "format": "${POINT_FORMAT}", found ${found}); merge takes the files clustersim scale --shard writes`);
  }
  return checkRecord(value, where);
}

const sameList = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Why record `r` is not of the same sweep as `ref`, in words. */
function sweepDifference(r: PointRecord, ref: PointRecord): string {
  if (r.version !== ref.version) return `made by clustersim ${r.version}, the other by ${ref.version}`;
  if (r.mode !== ref.mode) return `${r.mode} scaling, the other ${ref.mode}`;
  if (!sameList(r.scenarios, ref.scenarios)) return `scenarios ${r.scenarios.join(', ')}, the other ${ref.scenarios.join(', ')}`;
  if (!sameList(r.gpuCounts, ref.gpuCounts)) return `GPU counts ${r.gpuCounts.join(',')}, the other ${ref.gpuCounts.join(',')}`;
  return `same files, mode and GPU counts, but the scenario contents or --set overrides differ (sweep ${r.sweep}, the other ${ref.sweep})`;
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
const pointName = (r: Pick<PointRecord, 'point' | 'source' | 'gpus'>) => `point ${r.point + 1} (${r.source} at ${r.gpus} GPUs)`;

/**
 * Joins the parts of a sharded sweep into the series an unsharded run prints. Checks that every line
 * is a point record, that all come from one sweep (same `sweep` id), that no point appears twice and
 * none is missing; blank lines are skipped. Speedup and efficiency are computed here, over the whole
 * series, exactly as the unsharded run computes them, so the output is the same.
 */
export function mergeParts(parts: readonly PartText[]): MergedSweep {
  let ref: { record: PointRecord; where: string } | undefined;
  let byPoint: ({ record: PointRecord; where: string } | undefined)[] = [];
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
        byPoint = new Array(record.scenarios.length * record.gpuCounts.length).fill(undefined);
      } else if (record.sweep !== ref.record.sweep) {
        throw new MergeError(`${where}: belongs to a different sweep than ${ref.where}: ${sweepDifference(record, ref.record)}`);
      }
      // Parts of one sweep must be cut the same way: --shard i/N with one N.
      const cut = /^\d+\/(\d+)$/.exec(record.shard);
      if (cut && split && Number(cut[1]) !== split.count) {
        throw new MergeError(`${where}: a part of ${cut[1]} (--shard ${record.shard}), but ${split.where} is a part of ${split.count} (--shard ${split.shard}); run every part with the same N in --shard i/N`);
      }
      if (cut && !split) split = { count: Number(cut[1]), where, shard: record.shard };
      const seen = byPoint[record.point];
      if (seen) throw new MergeError(`${where}: ${pointName(record)} is already in ${seen.where}; every point must come from exactly one part (was a part given twice?)`);
      const first = firstOfSeries.get(record.series);
      if (first && (first.record.name !== record.name || splitText(first.record) !== splitText(record))) {
        throw new MergeError(`${where}: scenario ${record.series} is '${record.name}' with ${splitText(record)}, but ${first.where} says '${first.record.name}' with ${splitText(first.record)}`);
      }
      byPoint[record.point] = { record, where };
      if (!first) firstOfSeries.set(record.series, { record, where });
    });
  }
  if (!ref) {
    const names = parts.map((p) => p.file).join(', ');
    throw new MergeError(`no points in ${names || 'the input'}: every part is empty (a part is empty only when a sweep has fewer points than parts)`);
  }
  const head = ref.record;
  const perSeries = head.gpuCounts.length;
  const missing = byPoint.flatMap((e, point) => (e ? [] : [point]));
  if (missing.length > 0) {
    // Every part was cut with the same N (checked above), so each missing point has one part it belongs to.
    const count = split?.count;
    const list = missing.slice(0, 5).map((point) => {
      const name = pointName({ point, source: head.scenarios[Math.floor(point / perSeries)], gpus: head.gpuCounts[point % perSeries] });
      return count ? `${name}, part ${shardOf(point, count)}/${count}` : name;
    });
    const more = missing.length > list.length ? `, and ${missing.length - list.length} more` : '';
    throw new MergeError(`missing ${missing.length} of ${byPoint.length} points of the sweep: ${list.join('; ')}${more}. Is a part missing, or was one cut short?`);
  }
  const series: ScaleSeries[] = head.scenarios.map((source, s) => {
    const entries = byPoint.slice(s * perSeries, (s + 1) * perSeries).map((e) => e!.record);
    const rows: ScaleRow[] = entries.map((r) => r.row);
    const { name, tp, pp, cp } = entries[0];
    return { name, source, mode: head.mode, tp, pp, ...(cp !== undefined ? { cp } : {}), ...pickCommSettings(entries[0]), rows: withScaling(rows) };
  });
  return { sweep: head.sweep, mode: head.mode, series, points: byPoint.length };
}
