import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Residual } from './errorBand.js';
import type { KindPart } from './setupKind.js';

/**
 * The validation residuals the error bands rest on: data/validation-residuals.json, written by
 * `npm run validate -- --all --write-residuals` from the sets it predicts (src/validation/stepSets.ts). It is
 * regenerated whenever a model change moves a validated prediction; test/accuracy/residualsCurrent.test.ts
 * re-predicts a sample of its rows to catch a stale file.
 */

export const RESIDUALS_FILE = fileURLToPath(new URL('../../data/validation-residuals.json', import.meta.url));

/** One stored row: its set, its index in the set, a label, its ranking group (if any), its kind and the two times. */
export interface StoredResidual extends Residual {
  index: number;
  label: string;
  /** Rows of one group are the same job split differently (src/validation/ranking.ts); absent outside such sets. */
  rankGroup?: string;
}

export interface ResidualFile {
  /** The command that wrote the file. */
  writtenBy: string;
  /** clustersim's version when it was written. */
  version: string;
  rows: StoredResidual[];
}

const KIND_KEYS: KindPart[] = ['gpu', 'style', 'scale', 'host'];

/** The file as text: one row a line, so that a change to the model shows as the rows it moved. */
export function residualFileText(file: ResidualFile): string {
  const rows = file.rows.map((r) => `    ${JSON.stringify(r)}`);
  return (
    `{\n  "writtenBy": ${JSON.stringify(file.writtenBy)},\n  "version": ${JSON.stringify(file.version)},\n  "rows": ` +
    `[\n${rows.join(',\n')}\n  ]\n}\n`
  );
}

function checkedRow(r: unknown, i: number): StoredResidual {
  const row = r as StoredResidual;
  const ok =
    typeof row?.set === 'string' &&
    (row.rankGroup === undefined || typeof row.rankGroup === 'string') &&
    row.measuredS > 0 &&
    row.predictedS > 0 &&
    KIND_KEYS.every((k) => typeof row.kind?.[k] === 'string');
  if (!ok) throw new Error(`${RESIDUALS_FILE}: row ${i} is not a residual (set, kind, measuredS > 0, predictedS > 0)`);
  return row;
}

let cached: StoredResidual[] | undefined;

/** The stored residuals (read once). */
export function storedResiduals(): StoredResidual[] {
  cached ??= (JSON.parse(readFileSync(RESIDUALS_FILE, 'utf8')) as ResidualFile).rows.map(checkedRow);
  return cached;
}
