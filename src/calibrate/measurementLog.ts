import { appendFileSync, existsSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { fileErrorReason } from '../fileErrors.js';
import { readInputText } from '../inputFile.js';
import type { MachineInfo } from './backends.js';
import { FitError, summarise } from './stats.js';
import type { BackendKind, MeasurementRecord, PlannedItem, RawResult } from './types.js';

/**
 * The measurement log: JSON lines, a header first, then one line per measurement, appended (and so on disk)
 * the moment it is taken. An interrupted calibration loses at most the measurement in flight; `--resume`
 * reads the log and skips every id it already holds.
 */

export const LOG_SCHEMA = 'clustersim.calibration-log';
export const LOG_SCHEMA_VERSION = 1;

export interface LogHeader {
  type: 'header';
  schema: typeof LOG_SCHEMA;
  schemaVersion: number;
  backend: BackendKind;
  quick: boolean;
  machine: MachineInfo;
  startedAt: string;
}

/** A log problem the user can fix (wrong file, mismatched resume); the CLI reports it as bad input. */
export class LogError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogError';
  }
}

/** Checks a raw native result and turns it into a log record. */
export function toRecord(planned: PlannedItem, raw: RawResult, takenAt = new Date().toISOString()): MeasurementRecord {
  if (!raw || !Array.isArray(raw.samplesS)) throw new FitError(`${planned.id}: the backend returned no samples`);
  const record: MeasurementRecord = {
    type: 'measurement',
    id: planned.id,
    group: planned.group,
    item: planned.item,
    samplesS: raw.samplesS,
    summary: summarise(raw.samplesS),
    takenAt,
  };
  if (raw.extra && Object.keys(raw.extra).length > 0) record.extra = raw.extra;
  if (raw.notes && Object.keys(raw.notes).length > 0) record.notes = raw.notes;
  return record;
}

export interface ParsedLog {
  header?: LogHeader;
  records: MeasurementRecord[];
  /** Lines that could not be read (a line cut short by an interruption), 1-based. */
  badLines: number[];
}

/** Parses a log's text; later records for the same id replace earlier ones. */
export function parseLog(text: string): ParsedLog {
  const byId = new Map<string, MeasurementRecord>();
  const badLines: number[] = [];
  let header: LogHeader | undefined;
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      badLines.push(i + 1);
      return;
    }
    const o = v as { type?: string };
    if (o.type === 'header' && (v as LogHeader).schema === LOG_SCHEMA) header = v as LogHeader;
    else if (
      o.type === 'measurement' &&
      typeof (v as MeasurementRecord).id === 'string' &&
      Array.isArray((v as MeasurementRecord).samplesS)
    ) {
      const r = v as MeasurementRecord;
      try {
        byId.set(r.id, { ...r, summary: summarise(r.samplesS) });
      } catch {
        badLines.push(i + 1);
      }
    } else badLines.push(i + 1);
  });
  return { header, records: [...byId.values()], badLines };
}

/**
 * What makes measurements of two runs incomparable, as `<then>, this run <now>`, or undefined when nothing does: the
 * GPUs (names, count), the driver and NCCL versions, the CPU model, and for the CPU backend the threads and the clock.
 */
export function setupDifference(then: MachineInfo, now: MachineInfo): string | undefined {
  const gpus = (m: MachineInfo) =>
    m.cuda
      ? `${m.cuda.devices.length} × ${[...new Set(m.cuda.devices.map((d) => d.name))].join(' + ') || 'no GPU'}`
      : undefined;
  const facts: [string, (m: MachineInfo) => unknown][] = [
    ['GPUs', gpus],
    ['driver', (m) => m.cuda?.driverVersion],
    ['NCCL', (m) => m.cuda?.ncclVersion],
    ['CPU', (m) => m.cpu.model],
    ['threads', (m) => m.computeThreads],
    ['clock', (m) => m.cpuClock],
  ];
  for (const [name, of] of facts) {
    const a = of(then);
    const b = of(now);
    if (a !== b) return `${name} ${String(a ?? 'not recorded')}, this run ${String(b ?? 'not recorded')}`;
  }
  return undefined;
}

/** Appends records to a log file. */
export class MeasurementLog {
  private constructor(readonly path: string) {}

  /** Starts a new log; refuses to overwrite one that holds measurements (use `resume` or delete it). */
  static create(path: string, header: Omit<LogHeader, 'type' | 'schema' | 'schemaVersion'>): MeasurementLog {
    if (existsSync(path) && statSync(path).size > 0) {
      throw new LogError(
        `${path} already holds measurements: pass --resume to continue that calibration, ` +
          'or delete the file to start over',
      );
    }
    const full: LogHeader = { type: 'header', schema: LOG_SCHEMA, schemaVersion: LOG_SCHEMA_VERSION, ...header };
    writeFileSync(path, `${JSON.stringify(full)}\n`);
    return new MeasurementLog(path);
  }

  /**
   * Reopens a log for `--resume`; it must exist and come from the same backend, mode and measuring setup (machine,
   * when `expected.machine` is given: see `setupDifference`).
   */
  static resume(
    path: string,
    expected: { backend: BackendKind; quick: boolean; machine?: MachineInfo },
  ): { log: MeasurementLog; parsed: ParsedLog } {
    if (!existsSync(path))
      throw new LogError(`--resume: ${path} does not exist; run without --resume to start a calibration`);
    let text: string;
    try {
      text = readInputText(path);
    } catch (err) {
      throw new LogError(`--resume: cannot read ${path}: ${fileErrorReason(err)}`);
    }
    const parsed = parseLog(text);
    const h = parsed.header;
    if (!h) throw new LogError(`--resume: ${path} is not a clustersim measurement log (no header line)`);
    if (h.schemaVersion !== LOG_SCHEMA_VERSION)
      throw new LogError(
        `--resume: ${path} has log schema version ${h.schemaVersion}, ` +
          `this version writes ${LOG_SCHEMA_VERSION}; start over`,
      );
    if (h.backend !== expected.backend)
      throw new LogError(
        `--resume: ${path} was measured with the ${h.backend} backend, not ${expected.backend}; ` +
          `pass --backend ${h.backend}`,
      );
    if (h.quick !== expected.quick)
      throw new LogError(
        `--resume: ${path} was a ${h.quick ? '--quick' : 'full'} calibration; ${h.quick ? 'add' : 'drop'} --quick`,
      );
    const differs = expected.machine ? setupDifference(h.machine, expected.machine) : undefined;
    if (differs) {
      // Options that would make this run's setup the log's, when nothing else differs.
      const now = expected.machine!;
      const sameOptions =
        setupDifference(h.machine, {
          ...now,
          computeThreads: h.machine.computeThreads,
          cpuClock: h.machine.cpuClock,
        }) === undefined;
      const same = !sameOptions
        ? []
        : [
            h.machine.computeThreads !== undefined && h.machine.computeThreads !== now.computeThreads
              ? `--threads ${h.machine.computeThreads}`
              : '',
            h.machine.cpuClock !== now.cpuClock
              ? h.machine.cpuClock === 'wall'
                ? 'with --wall-clock'
                : 'without --wall-clock'
              : '',
          ].filter((x) => x);
      throw new LogError(
        `--resume: ${path} was measured with ${differs}; measurements taken under different setups cannot be fitted ` +
          `together: resume it with the same setup${same.length > 0 ? ` (${same.join(' ')})` : ''}, ` +
          'or start a new log (--log another.jsonl)',
      );
    }
    // The next record must start a line of its own. A last line cut short (a write stopped by a kill or a power cut:
    // it did not parse) is dropped, and its measurement is taken again; a whole last line without its line end (an
    // editor's doing) is ended.
    if (text.length > 0 && !text.endsWith('\n')) {
      const lines = text.split('\n');
      if (parsed.badLines.includes(lines.length))
        truncateSync(path, Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1)));
      else appendFileSync(path, '\n');
    }
    return { log: new MeasurementLog(path), parsed };
  }

  append(record: MeasurementRecord): void {
    appendFileSync(this.path, `${JSON.stringify(record)}\n`);
  }
}
