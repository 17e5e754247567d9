import { scalingBaseGpus, type ScaleRow } from '../sweep/scaleMath.js';
import type { CommSettings } from '../sweep/commSettings.js';
import { bandCsvCells, bandCellOf } from '../accuracy/bandText.js';
import { bytesText, countText, durationText, percentText } from './format.js';

/** Column headers of the scaling table, as printed and in the HTML report. */
export const SCALE_TABLE_HEADER = [
  'GPUs',
  'nodes',
  'dp',
  'global batch',
  'step time',
  'error band',
  'samples/s',
  'tokens/s',
  'speedup',
  'efficiency',
  'MFU',
  'exposed comm',
  'memory/GPU',
  'fits',
  'note',
];

/** The scaling table's cells as text, one row per GPU count; infeasible rows show their reason. */
export function scaleTableRows(rows: readonly ScaleRow[]): string[][] {
  const opt = (v: number | undefined, f: (v: number) => string) => (v === undefined ? '-' : f(v));
  return rows.map((r) => [
    String(r.gpus),
    opt(r.nodes, String),
    opt(r.dp, String),
    opt(r.globalBatch, String),
    opt(r.stepTimeS, (s) => durationText(s * 1e9)),
    r.errorBand === undefined ? '-' : bandCellOf(r.errorBand),
    opt(r.samplesPerS, (v) => countText(v, 1)),
    opt(r.tokensPerS, (v) => countText(v)),
    opt(r.speedup, (v) => `${v.toFixed(2)}x`),
    opt(r.efficiency, (v) => percentText(v)),
    opt(r.mfu, (v) => percentText(v)),
    opt(r.exposedCommShare, (v) => percentText(v)),
    opt(r.memoryBytesPerGpu, bytesText),
    r.status === 'infeasible' || r.status === 'interrupted' ? '-' : r.fits ? 'yes' : 'OOM',
    noteOf(r),
  ]);
}

/** The note cell: why a size did not run or fit, and the micro-batch where strong scaling lowered it. */
function noteOf(r: ScaleRow): string {
  const why =
    r.reason ??
    (r.status === 'oom' && r.memoryBytesPerGpu !== undefined && r.capacityBytes !== undefined
      ? `short by ${bytesText(r.memoryBytesPerGpu - r.capacityBytes)}`
      : '');
  return [r.microBatch !== undefined ? `micro-batch ${r.microBatch}` : '', why].filter((x) => x !== '').join('; ');
}

/**
 * Columns of the CSV file: plain numbers in SI units (seconds, bytes, fractions), one row per scenario and GPU count.
 * After the row's own columns, what the scenario holds fixed, on every line so that a script can group or filter by it:
 * tp, pp and cp (1 without context parallelism); `cp_comm_type` (empty when cp is 1, where it does not apply);
 * `tp_comm_overlap` (true or false) and the SMs each overlap takes (empty when it is off). New columns go at the end.
 */
export const SCALE_CSV_COLUMNS = [
  'scenario',
  'mode',
  'gpus',
  'status',
  'nodes',
  'dp',
  'global_batch',
  'step_time_s',
  'samples_per_s',
  'tokens_per_s',
  'speedup',
  'efficiency',
  'exposed_comm_share',
  'mfu',
  'memory_bytes_per_gpu',
  'capacity_bytes',
  'fits',
  'reason',
  'tp',
  'pp',
  'cp',
  'cp_comm_type',
  'tp_comm_overlap',
  'tp_comm_overlap_sms_proj',
  'tp_comm_overlap_sms_fc2',
  'tp_comm_overlap_sms_bulk',
  'speedup_base_gpus',
  'error_band_low_pct',
  'error_band_high_pct',
  'error_band_rows',
  'micro_batch',
] as const;

/** What `scaleCsv` needs of a series: its name, mode, split and communication settings, and rows. */
export interface CsvSeries extends CommSettings {
  name: string;
  mode: string;
  tp: number;
  pp: number;
  /** Absent: 1. */
  cp?: number;
  rows: readonly ScaleRow[];
}

/** A CSV cell: quoted when it holds a quote, a comma or a line break. */
export function csvCell(v: string | number | boolean | undefined): string {
  if (v === undefined) return '';
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A CSV document (RFC 4180, header first) of the rows of several scenarios. */
export function scaleCsv(series: readonly CsvSeries[]): string {
  const lines: string[] = [SCALE_CSV_COLUMNS.join(',')];
  for (const s of series) {
    const sms = s.tpCommOverlap ? s.tpCommOverlapSms : undefined;
    const fixed = [s.tp, s.pp, s.cp ?? 1, s.cpCommType, s.tpCommOverlap === true, sms?.proj, sms?.fc2, sms?.bulk];
    // The size speedup and efficiency are measured against (the smallest simulated), on the rows that have them.
    const base = scalingBaseGpus(s.rows);
    for (const r of s.rows) {
      const cells = [
        s.name,
        s.mode,
        r.gpus,
        r.status,
        r.nodes,
        r.dp,
        r.globalBatch,
        r.stepTimeS,
        r.samplesPerS,
        r.tokensPerS,
        r.speedup,
        r.efficiency,
        r.exposedCommShare,
        r.mfu,
        r.memoryBytesPerGpu,
        r.capacityBytes,
        r.fits,
        r.reason,
        ...fixed,
        r.speedup !== undefined ? base : undefined,
        ...bandCsvCells(r.errorBand),
        r.microBatch,
      ];
      lines.push(cells.map(csvCell).join(','));
    }
  }
  return `${lines.join('\n')}\n`;
}
