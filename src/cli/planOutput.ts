import { bandRangeS } from '../accuracy/errorBand.js';
import { TIE_QUANTILE } from '../accuracy/pairSpread.js';
import { knobsText, layoutText } from '../plan/candidates.js';
import type { PlanResult, PlanRow } from '../plan/search.js';
import type { Objective } from '../plan/objective.js';
import { whyClause } from '../plan/why.js';
import { table } from '../report/textTable.js';
import { PLAN_TABLE_HEADER, planTableRows } from '../report/planTable.js';
import { csvCell } from '../report/scaleTable.js';
import { VERSION } from '../version.js';
import { MFU_NOTE_ABOVE } from '../sim/stepNotes.js';
import { formatBytes, formatSeconds } from './units.js';

/** What a training run of `tokens` costs on `gpus` GPUs at `pricePerGpuHour`, from a step's throughput. */
export interface RunCost {
  days: number;
  gpuHours: number;
  cost?: number;
}

export function runCost(row: PlanRow, gpus: number, tokens: number, pricePerGpuHour?: number): RunCost {
  const seconds = tokens / row.sim.tokensPerS;
  const gpuHours = (gpus * seconds) / 3600;
  return {
    days: seconds / 86400,
    gpuHours,
    ...(pricePerGpuHour !== undefined ? { cost: gpuHours * pricePerGpuHour } : {}),
  };
}

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

/** A token count as people write it: 2T, 300B, 1.5M. */
export function tokensText(n: number): string {
  for (const [suffix, v] of [
    ['T', 1e12],
    ['B', 1e9],
    ['M', 1e6],
    ['K', 1e3],
  ] as const)
    if (n >= v) return `${Number((n / v).toPrecision(4))}${suffix}`;
  return String(n);
}

/** The counts line of a rule map: `does not fit in memory 820, more recompute than needed 300`. */
function countLines(counts: Partial<Record<string, number>>, indent: string): string[] {
  return Object.entries(counts)
    .filter(([, n]) => (n ?? 0) > 0)
    .sort((a, b) => (b[1] ?? 0) - (a[1] ?? 0))
    .map(([rule, n]) => `${indent}${rule.padEnd(44)} ${String(n).padStart(7)}`);
}

/** The ending of the ordinal of n: `st`, `nd`, `rd` or `th`. */
const ordinalEnding = (n: number) =>
  n % 10 === 2 && n % 100 !== 12
    ? 'nd'
    : n % 10 === 3 && n % 100 !== 13
      ? 'rd'
      : n % 10 === 1 && n % 100 !== 11
        ? 'st'
        : 'th';

/** `the best estimate`, `the 2nd best estimate`, … */
const nthBest = (n: number) => (n === 1 ? 'the best estimate' : `the ${n}${ordinalEnding(n)} best estimate`);

/** How the search went: what it considered and what each rule removed. */
export function searchLines(p: PlanResult, top: number): string[] {
  const refused = Object.entries(p.refused).map(([path, r]) => `${path} ${r.count}`);
  const survivors = p.estimated;
  return [
    ...(p.interrupted ? ['  interrupted (Ctrl-C): the counts and the ranking cover only what was done before it'] : []),
    `  layouts      ${p.layouts} that tile ${p.gpus} GPUs (tp × cp × pp × dp, micro-batch, schedule)`,
    ...countLines(p.layoutsRemoved, '    left out: '),
    `  candidates   ${p.candidates} (layouts × ZeRO stage, offload, recompute, sequence parallelism, TP overlap)`,
    '  pruned by the memory account, before any simulation:',
    ...countLines(p.memoryRemoved, '    '),
    ...(refused.length > 0 ? [`    refused by the scenario checks (by field): ${refused.join(', ')}`] : []),
    `  estimated    ${survivors} of the ${p.fitting} that fit, each from two short simulations extended by ` +
      `micro-batches${p.estimateErrors > 0 ? ` (${p.estimateErrors} could not be simulated)` : ''}`,
    ...(p.bounded > 0
      ? [`  bounded out  ${p.bounded}: the busiest stream of one of their GPUs alone takes longer than ${nthBest(top)}`]
      : []),
    ...(p.rows.length > 0
      ? [
          `  simulated    the best ${p.rows.length} in full; ` +
            `the estimate was within ${p.estimateErrorPct.toFixed(2)}% of the simulation`,
        ]
      : []),
  ];
}

/** The sentence on why the winner wins, against the runner-up and the scenario's own setup. */
export function whyLines(p: PlanResult): string[] {
  const [winner, second] = p.rows;
  if (!winner) return [];
  const lines: string[] = [];
  const gain = (other: PlanRow) => `${(100 * (other.sim.stepTimeS / winner.sim.stepTimeS - 1)).toFixed(1)}%`;
  const same = (other: PlanRow) => Math.abs(other.sim.stepTimeS / winner.sim.stepTimeS - 1) < 5e-4;
  if (second && same(second))
    lines.push('  why: #1 and #2 take the same time (within 0.05%); #1 is listed first for its place in the search.');
  else if (second)
    lines.push(`  why: #1 is ${gain(second)} faster than #2: ${whyClause(winner.sim, second.sim, formatSeconds)}.`);
  if (p.own && p.own !== winner && !winner.own)
    lines.push(
      "  against the scenario's own setup " +
        `(${formatSeconds(p.own.sim.stepTimeS)}${p.own.sim.fits ? '' : ', does not fit'}): ` +
        `${gain(p.own)} faster, ${whyClause(winner.sim, p.own.sim, formatSeconds)}.`,
    );
  if (winner.own) lines.push("  the scenario's own setup is the best found.");
  lines.push(...biasLines(p.rows));
  return lines;
}

/**
 * A caution when the error bands disagree with the order: validated runs of some kinds (ZeRO-3/FSDP, say) measured
 * longer than predicted more than others, so a row whose time, moved by its band's median, beats #1's so moved is
 * named. The ranking itself stays the model's: the medians are not fitted into it.
 */
export function biasLines(rows: readonly PlanRow[]): string[] {
  const corrected = (r: PlanRow) => (r.band ? r.sim.stepTimeS * (1 + r.band.medianPct / 100) : undefined);
  const first = rows[0] && corrected(rows[0]);
  if (first === undefined) return [];
  let best: { i: number; t: number } | undefined;
  for (const [i, r] of rows.entries()) {
    const t = corrected(r);
    if (i > 0 && t !== undefined && t < first && (!best || t < best.t)) best = { i, t };
  }
  if (!best) return [];
  const m = (r: PlanRow) => `${r.band!.medianPct >= 0 ? '+' : ''}${r.band!.medianPct.toFixed(0)}%`;
  const other = rows[best.i];
  return [
    `  caution: validated runs like #1 measured a median ${m(rows[0])} against its prediction, ` +
      `like #${best.i + 1} ${m(other)}; with those medians #${best.i + 1} would be faster (${formatSeconds(best.t)} ` +
      `against ${formatSeconds(first)}). Measure both.`,
  ];
}

/** The tie note: what makes a runner-up a tie, from the validated pairs. */
export function tieLines(p: PlanResult): string[] {
  if (!p.spread) return ['  ties: no validated pairs of splits to judge ties by; the order rests on the model alone.'];
  const ties = p.rows.filter((r) => r.tie).length;
  return [
    `  ties: ${ties === 0 ? 'none; ' : `${ties} marked "tie" are `}within ${p.spread.pct.toFixed(1)}% of #1, ` +
      `the ${Math.round(100 * TIE_QUANTILE)}th percentile of how far the model's ratio of two`,
    `  splits of one job strayed from the measured ratio (${p.spread.pairs.toLocaleString('en-US')} pairs in ` +
      `${p.spread.groups} validated groups): such an order is not to be trusted.`,
  ];
}

export interface PlanTextContext {
  name: string;
  command: string;
  gpus: number;
  tokens?: number;
  price?: number;
}

/** The whole text answer. */
/** What follows the table: the notes on it, why the winner wins, the ties, the cost of a run and the command. */
export function noteLines(p: PlanResult, ctx: PlanTextContext): string[] {
  if (p.rows.length === 0) {
    if (p.interrupted) return ['  interrupted before any candidate was estimated: no answer.'];
    if (p.fitting > 0)
      return [`  none of the ${p.fitting} candidates that fit could be simulated (see the counts above).`];
    return [
      '  nothing fits: no candidate of the space fits in memory (see the counts above); ' +
        'try more GPUs (--gpus) or a wider --space.',
    ];
  }
  const lines = [
    '  compute, exp. comm and bubble: shares of the step (mean over GPUs); ' +
      'likely: the error band of validated runs like it.',
  ];
  if (p.rows.some((r) => r.sim.mfu > MFU_NOTE_ABOVE))
    lines.push(
      `  MFU above ${Math.round(100 * MFU_NOTE_ABOVE)}% is more than published training runs report: ` +
        'read those rows as optimistic.',
    );
  lines.push(...whyLines(p), ...tieLines(p));
  if (ctx.tokens !== undefined) {
    const c = runCost(p.rows[0], ctx.gpus, ctx.tokens, ctx.price);
    const costText =
      c.cost !== undefined ? `, ${Math.round(c.cost).toLocaleString('en-US')} at ${ctx.price} per GPU-hour` : '';
    lines.push(
      `  to train ${tokensText(ctx.tokens)} tokens with #1: ` +
        `${c.days.toFixed(1)} days, ${Math.round(c.gpuHours).toLocaleString('en-US')} GPU-hours${costText}`,
    );
  }
  lines.push('', `  to run #1: ${ctx.command}${p.rows[0].changed.map((s) => ` --set ${s}`).join('')}`);
  return lines;
}

/** The whole text answer for one GPU count. */
export function formatPlan(p: PlanResult, ctx: PlanTextContext, top: number): string {
  const lines = [`plan: ${ctx.name} on ${ctx.gpus} GPUs`, ...searchLines(p, top), ''];
  if (p.rows.length > 0)
    lines.push(
      table(PLAN_TABLE_HEADER, planTableRows(p, PLAN_UNITS))
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n'),
      '',
    );
  return [...lines, ...noteLines(p, ctx)].join('\n');
}

/** The units of the CLI, for tables built in src/report. */
export const PLAN_UNITS = { seconds: formatSeconds, bytes: formatBytes };

function rowJson(r: PlanRow, gpus: number, tokens?: number, price?: number): Record<string, unknown> {
  const band = r.band
    ? { ...bandRangeS(r.band, r.sim.stepTimeS), lowPct: r.band.lowPct, highPct: r.band.highPct, rows: r.band.rows }
    : undefined;
  return {
    layout: r.candidate.layout,
    knobs: r.candidate.knobs,
    sets: r.sets,
    changed: r.changed,
    estimateS: r.estimateS,
    ...r.sim,
    headroomBytes: r.sim.capacityBytes - r.sim.peakBytesPerGpu,
    ...(band ? { errorBand: band } : {}),
    tie: r.tie,
    own: r.own,
    ...(tokens !== undefined ? { run: runCost(r, gpus, tokens, price) } : {}),
  };
}

export function planJson(p: PlanResult, ctx: PlanTextContext): Record<string, unknown> {
  const { rows, own, ...search } = p;
  return {
    version: VERSION,
    name: ctx.name,
    ...search,
    rows: rows.map((r) => rowJson(r, p.gpus, ctx.tokens, ctx.price)),
    ...(own ? { own: rowJson(own, p.gpus, ctx.tokens, ctx.price) } : {}),
  };
}

const CSV_HEADER = [
  'gpus',
  'rank',
  'tie',
  'own',
  'tp',
  'cp',
  'pp',
  'dp',
  'microBatch',
  'schedule',
  'virtualStages',
  'zero',
  'offload',
  'recompute',
  'sequenceParallel',
  'tpCommOverlap',
  'stepTimeS',
  'bandLowS',
  'bandHighS',
  'estimateS',
  'tokensPerS',
  'mfu',
  'peakBytesPerGpu',
  'capacityBytes',
  'computeS',
  'exposedCommS',
  'bubbleS',
  'bound',
  'sets',
];

/** The simulated setups of every plan (one per GPU count) as CSV, one row each, the scenario's own marked `own`. */
export function planCsv(plans: readonly PlanResult[]): string {
  const lines = plans.flatMap((p) => {
    const all = [
      ...p.rows.map((r, i) => ({ r, rank: String(i + 1) })),
      ...(p.own && !p.rows.includes(p.own) ? [{ r: p.own, rank: 'own' }] : []),
    ];
    return all.map(({ r, rank }) => {
      const l = r.candidate.layout;
      const k = r.candidate.knobs;
      const band = r.band ? bandRangeS(r.band, r.sim.stepTimeS) : undefined;
      const b = r.sim.breakdown;
      return [
        p.gpus,
        rank,
        r.tie,
        r.own,
        l.tp,
        l.cp,
        l.pp,
        l.dp,
        l.microBatch,
        l.schedule,
        l.virtualStages,
        k.zero,
        k.offload,
        k.recompute,
        k.sequenceParallel,
        k.tpCommOverlap,
        r.sim.stepTimeS,
        band?.lowS,
        band?.highS,
        r.estimateS,
        r.sim.tokensPerS,
        r.sim.mfu,
        r.sim.peakBytesPerGpu,
        r.sim.capacityBytes,
        b.computeS,
        b.exposedCommS,
        b.bubbleS,
        r.sim.bound,
        r.sets.join(' '),
      ]
        .map(csvCell)
        .join(',');
    });
  });
  return [CSV_HEADER.join(','), ...lines].join('\n') + '\n';
}

/** The best of each GPU count, one line each, and which the objective picks. */
export function formatSizes(
  plans: readonly PlanResult[],
  chosen: number,
  objective: Objective,
  ctx: Omit<PlanTextContext, 'gpus' | 'command'>,
): string {
  const rows = plans.map((p, i) => {
    const w = p.rows[0];
    if (!w) return [String(p.gpus), 'nothing fits', '', '', '', '', ''];
    const perToken = p.gpus / w.sim.tokensPerS / 3600;
    const run = ctx.tokens !== undefined ? runCost(w, p.gpus, ctx.tokens, ctx.price) : undefined;
    return [
      `${p.gpus}${i === chosen ? ' *' : ''}`,
      `${layoutText(w.candidate.layout)}; ${knobsText(w.candidate.knobs)}`,
      formatSeconds(w.sim.stepTimeS),
      Math.round(w.sim.tokensPerS).toLocaleString('en-US'),
      pct(w.sim.mfu),
      `${(perToken * 1e9).toFixed(0)}`,
      run
        ? `${run.days.toFixed(1)} d${run.cost !== undefined ? `, ${Math.round(run.cost).toLocaleString('en-US')}` : ''}`
        : '',
    ];
  });
  const header = [
    'GPUs',
    'best split',
    'step',
    'tokens/s',
    'MFU',
    'GPU-h per 1B tokens',
    ctx.tokens !== undefined ? `${tokensText(ctx.tokens)} tokens` : '',
  ];
  const words =
    objective === 'cost'
      ? 'the fewest GPU-hours per token'
      : objective === 'time'
        ? 'the shortest time to train'
        : 'the most tokens per second';
  return [
    `plan: ${ctx.name} at ${plans.length} GPU counts; * marks ${words} (--objective ${objective})`,
    table(header, rows)
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n'),
  ].join('\n');
}

export function sizesJson(
  plans: readonly PlanResult[],
  chosen: number,
  objective: Objective,
  ctxOf: (gpus: number) => PlanTextContext,
): Record<string, unknown> {
  return {
    version: VERSION,
    objective,
    chosenGpus: plans[chosen].gpus,
    sizes: plans.map((p) => planJson(p, ctxOf(p.gpus))),
  };
}
