import { bandRangeS, errorBandFor, type ErrorBand, type Residual } from './errorBand.js';
import { kindWords, type SetupKind, type KindPart } from './setupKind.js';

/**
 * The error band as the outputs show it: a sentence for `simulate`, a short cell for `scale`'s table, and the
 * `--json` object, which carries the band's figures or, with no comparable validated row, the reason.
 */

export type BandJson =
  | {
      rows: number;
      matched: KindPart[];
      sets: string[];
      edges: ErrorBand['edges'];
      lowPct: number;
      medianPct: number;
      highPct: number;
      stepTimeLowS: number;
      stepTimeHighS: number;
    }
  | { rows: 0; note: string };

const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(0)}%`;

/** The parts of the kind the band's rows share, in words: `Ampere (A100), pipeline-parallel, several nodes`. */
function matchedWords(kind: SetupKind, matched: readonly KindPart[]): string {
  const words = matched.map((part) => (kindWords[part] as (v: string) => string)(kind[part])).join(', ');
  // Rows of other GPUs, or of other parallel styles, stand in: say so.
  if (!matched.includes('gpu')) return `${words} on other GPUs (too few validated on ${kindWords.gpu(kind.gpu)})`;
  if (!matched.includes('style'))
    return `${words}, other parallel styles (too few validated ${kindWords.style(kind.style)}): runs not like this one`;
  return words;
}

/** Why there is no band: no validated row of this parallel style on any GPU. */
export function noBandNote(kind: SetupKind): string {
  if (kind.moe)
    return (
      'no validated run with experts is comparable (the MoE runs validated are Megatron-Core on H100): ' +
      'treat this prediction as unvalidated'
    );
  return (
    `no validated run is comparable (too few are ${kindWords.style(kind.style)} or on ${kindWords.gpu(kind.gpu)}): ` +
    'treat this prediction as unvalidated'
  );
}

export function bandJson(kind: SetupKind, band: ErrorBand | undefined, predictedS: number): BandJson {
  if (!band) return { rows: 0, note: noBandNote(kind) };
  const { lowS, highS } = bandRangeS(band, predictedS);
  return {
    rows: band.rows,
    matched: band.matched,
    sets: band.sets,
    edges: band.edges,
    lowPct: band.lowPct,
    medianPct: band.medianPct,
    highPct: band.highPct,
    stepTimeLowS: lowS,
    stepTimeHighS: highS,
  };
}

/** A residual in words: `9% more` or `3% less` (than predicted). */
const moreOrLess = (pct: number) => `${Math.abs(pct).toFixed(0)}% ${pct >= 0 ? 'more' : 'less'}`;

/** The step times the band spans: `likely 6.23 s to 7.00 s`; `unvalidated` without a band. */
export function bandRangeText(band: ErrorBand | undefined, predictedS: number, seconds: (s: number) => string): string {
  if (!band) return 'unvalidated';
  const { lowS, highS } = bandRangeS(band, predictedS);
  return `likely ${seconds(lowS)} to ${seconds(highS)}`;
}

/** What the band rests on, in words (`simulate`'s error band line). */
export function bandBasis(kind: SetupKind, band: ErrorBand | undefined): string {
  if (!band) return noBandNote(kind);
  return (
    `validated runs like this one measured ${moreOrLess(band.lowPct)} to ${moreOrLess(band.highPct)} than predicted ` +
    `(${band.edges === 'p10-p90' ? '10th to 90th percentile' : 'lowest to highest'}, median ` +
    `${moreOrLess(band.medianPct)}; ${band.rows} ${kind.fp8 ? 'FP8 ' : ''}${kind.moe ? 'MoE ' : ''}rows: ` +
    `${matchedWords(kind, band.matched)}; from ${band.sets.join(', ')})`
  );
}

/**
 * The memory account's band: none yet. No measured peak memory is among the validation sets, so the account is
 * checked against closed forms (its tests), not against measured runs.
 */
export const MEMORY_BAND_NOTE =
  'no validated measurement of peak memory is bundled yet, so this account is checked against closed forms, ' +
  'not measured runs: treat its verdict near the capacity as unvalidated';

export const memoryBandJson = (): BandJson => ({ rows: 0, note: MEMORY_BAND_NOTE });

/** `scale`'s cell from a row's band: `−3%…+9%`, or `none` without comparable rows. */
export function bandCellOf(b: BandJson): string {
  return 'lowPct' in b ? `${signed(b.lowPct)}…${signed(b.highPct)}` : 'none';
}

/** The CSV's band cells: low and high percent and the rows (empty, empty, 0 without a band; all empty unsimulated). */
export function bandCsvCells(b: BandJson | undefined): (number | undefined)[] {
  if (b === undefined) return [undefined, undefined, undefined];
  return 'lowPct' in b ? [b.lowPct, b.highPct, b.rows] : [undefined, undefined, 0];
}

/** A scale row with the band of its kind (rows without a kind, not simulated, are left as they are). */
export function withErrorBand<R extends { kind?: SetupKind; stepTimeS?: number }>(
  row: R,
  residuals: readonly Residual[],
): R & { errorBand?: BandJson } {
  if (row.kind === undefined || row.stepTimeS === undefined) return row;
  return { ...row, errorBand: bandJson(row.kind, errorBandFor(row.kind, residuals), row.stepTimeS) };
}
