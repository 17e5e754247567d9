import { bandRangeS } from '../accuracy/errorBand.js';
import { knobsText, layoutText } from '../plan/candidates.js';
import type { PlanResult, PlanRow } from '../plan/search.js';

/** How a table writes seconds and bytes (the CLI's units). */
export interface PlanUnits {
  seconds: (s: number) => string;
  bytes: (b: number) => string;
}

export const PLAN_TABLE_HEADER = [
  '#',
  'split',
  'settings',
  'step',
  'likely',
  'tokens/s',
  'MFU',
  'memory per GPU',
  'compute',
  'exp. comm',
  'bubble',
  'bound',
];

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

/** The band cell: `23.1 s–27.2 s`, or `no band` when no validated rows are like it. */
function bandCell(r: PlanRow, u: PlanUnits): string {
  if (!r.band) return 'no band';
  const { lowS, highS } = bandRangeS(r.band, r.sim.stepTimeS);
  return `${u.seconds(lowS)}–${u.seconds(highS)}`;
}

function rowCells(r: PlanRow, rank: string, u: PlanUnits): string[] {
  const s = r.sim;
  const share = (x: number) => pct(x / s.stepTimeS);
  return [
    rank,
    layoutText(r.candidate.layout),
    knobsText(r.candidate.knobs),
    u.seconds(s.stepTimeS),
    bandCell(r, u),
    Math.round(s.tokensPerS).toLocaleString('en-US'),
    pct(s.mfu),
    `${u.bytes(s.peakBytesPerGpu)} (${pct(1 - s.peakBytesPerGpu / s.capacityBytes)} free)`,
    share(s.breakdown.computeS),
    share(s.breakdown.exposedCommS),
    share(s.breakdown.bubbleS),
    s.bound,
  ];
}

/**
 * The rows of the answer: the simulated best, ties and the scenario's own marked, and its own setup last if not among
 * them.
 */
export function planTableRows(p: PlanResult, u: PlanUnits): string[][] {
  const rows = p.rows.map((r, i) => rowCells(r, `${i + 1}${r.tie ? ' tie' : ''}${r.own ? ' (yours)' : ''}`, u));
  if (p.own && !p.rows.includes(p.own)) rows.push(rowCells(p.own, 'yours', u));
  return rows;
}
