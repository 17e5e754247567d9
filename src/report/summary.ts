import { bottleneckText, stageImbalanceText, unequalStagesText } from '../sim/stats/bottleneck.js';
import type { StepResult } from '../sim/simulateStep.js';
import type { Alternative } from '../advise/alternatives.js';
import {
  bytesText,
  countText,
  durationText,
  percentText,
  strategyText,
  tflopsText,
  type StrategyParts,
} from './format.js';

/** What a report says about the scenario besides the simulation result. */
export interface ScenarioLabel {
  /** Scenario name (`bert-large-ddp-2node`). */
  name: string;
  modelName: string;
  clusterName: string;
  gpusPerNode: number;
  /** The calibration profile the run used (`simulate --profile`): its file and what it replaced. */
  profile?: { file: string; applied: readonly string[] };
}

/** `bert-large-ddp-2node: bert-large on 2× dgx-a100-80gb (16 GPUs)` */
export function titleOf(label: ScenarioLabel, r: StepResult): string {
  return `${label.name}: ${label.modelName} on ${label.clusterName} (${r.gpus} ${r.gpus === 1 ? 'GPU' : 'GPUs'})`;
}

/** `10.5 GiB of 80.0 GiB, fits` or `… OOM, short by 3.2 GiB` */
export function memoryVerdict(r: StepResult): string {
  const m = r.memory;
  return (
    `${bytesText(m.peakBytesPerGpu)} of ${bytesText(m.capacityBytes)}, ` +
    `${m.gpuFits ? 'fits' : `OOM, short by ${bytesText(m.shortfallBytes)}`}`
  );
}

/** `1.1 TiB of 2.0 TiB per node, fits` for optimizer offload's host memory, undefined without offload. */
export function hostMemoryVerdict(r: StepResult): string | undefined {
  const h = (r.memory as { host?: StepResult['memory']['host'] }).host;
  if (!h) return undefined;
  if (h.capacityBytes === undefined)
    return `${bytesText(h.bytesPerNode)} per node (the node's host memory is not stated: cluster.node.hostMemoryGiB)`;
  return (
    `${bytesText(h.bytesPerNode)} of ${bytesText(h.capacityBytes)} per node, ` +
    `${h.fits ? 'fits' : `does not fit, short by ${bytesText(h.shortfallBytes)}`}`
  );
}

/** Pipeline bubble time, s, when the simulator reports it (0 otherwise). */
function bubbleS(r: StepResult): number {
  const b = (r.breakdown as { bubbleS?: unknown }).bubbleS;
  return typeof b === 'number' ? b : 0;
}

/** The strategy line (`strategyText`) when the result says how the model is split, else undefined. */
function splitText(r: StepResult): string | undefined {
  const p = (r as { parallel?: Partial<StrategyParts> }).parallel;
  if (!p || typeof p.tp !== 'number' || typeof p.pp !== 'number' || typeof p.dp !== 'number') return undefined;
  return strategyText(p as StrategyParts);
}

/** The key figures in one line, for chart subtitles. */
export function keyFiguresLine(r: StepResult): string {
  const bubble = bubbleS(r);
  return [
    `step ${durationText(r.stepTimeS * 1e9)}`,
    `${countText(r.samplesPerS, 1)} samples/s`,
    `MFU ${percentText(r.mfu)}`,
    `exposed comm ${percentText(r.breakdown.exposedCommS / r.stepTimeS)}`,
    ...(bubble > 0 ? [`bubble ${percentText(bubble / r.stepTimeS)}`] : []),
    `memory ${memoryVerdict(r)}`,
  ].join(' · ');
}

/** The summary table of one step: [what, value] rows. */
export function summaryRows(label: ScenarioLabel, r: StepResult): [string, string][] {
  const share = (s: number) => `${durationText(s * 1e9)} (${percentText(s / r.stepTimeS)})`;
  const paramsText =
    r.modelParams >= 1e9 ? `${(r.modelParams / 1e9).toFixed(2)} B` : `${(r.modelParams / 1e6).toFixed(1)} M`;
  const hiddenShare = percentText(r.breakdown.commS > 0 ? 1 - r.breakdown.exposedCommS / r.breakdown.commS : 0);
  return [
    ['scenario', label.name],
    ['model', `${label.modelName}, ${paramsText} parameters`],
    ['cluster', `${label.clusterName}, ${r.gpus} GPUs`],
    ...(label.profile
      ? [['calibration profile', `${label.profile.file}: ${label.profile.applied.join('; ')}`] as [string, string]]
      : []),
    ...(splitText(r) ? [['parallelism', splitText(r)!] as [string, string]] : []),
    ['seed', String(r.seed)],
    ['step time', durationText(r.stepTimeS * 1e9)],
    ['throughput', `${countText(r.samplesPerS, 1)} samples/s, ${countText(r.tokensPerS)} tokens/s`],
    ['per GPU', `${tflopsText(r.tflopsPerGpu)} TFLOP/s model, ${tflopsText(r.hardwareTflopsPerGpu)} TFLOP/s hardware`],
    ['MFU', percentText(r.mfu)],
    ['memory per GPU', memoryVerdict(r)],
    ...(hostMemoryVerdict(r) ? [['host memory (offload)', hostMemoryVerdict(r)!] as [string, string]] : []),
    ['compute', share(r.breakdown.computeS)],
    ['exposed communication', share(r.breakdown.exposedCommS)],
    ...(bubbleS(r) > 0 ? [['pipeline bubble', share(bubbleS(r))] as [string, string]] : []),
    ...(r.breakdown.hostOptimizerS > 0
      ? [['optimizer on the host (CPU offload)', share(r.breakdown.hostOptimizerS)] as [string, string]]
      : []),
    ['idle', share(r.breakdown.idleS)],
    ['communication busy', `${durationText(r.breakdown.commS * 1e9)} (${hiddenShare} hidden behind compute)`],
    ...(r.bottleneck ? [['bottleneck', bottleneckText(r.bottleneck)] as [string, string]] : []),
    ...(unequalStages(r) ? [['unequal pipeline stages', unequalStages(r)!] as [string, string]] : []),
    ...notesOf(r).map((n) => ['note', n] as [string, string]),
    ['micro-batches per step', String(r.microBatchesPerStep)],
    [
      'gradient buckets',
      `${r.buckets.count} of ${bytesText(r.buckets.meanBytes)} on average` +
        (r.gradientAllReduce ? `, ${r.gradientAllReduce.algorithm}/${r.gradientAllReduce.protocol}` : ''),
    ],
  ];
}

/** The columns of {@link alternativeRows}. */
export const ALTERNATIVES_HEADER = ['option', 'step time', 'vs now', 'memory/GPU', 'fits', 'how'];

/**
 * The simulated alternatives as table rows after the current setup's: option, step time, change, memory per GPU,
 * fits, the --set to use. `units` formats seconds and bytes (the HTML report's by default; the CLI passes its own).
 */
export function alternativeRows(
  r: StepResult,
  alternatives: readonly Alternative[],
  units: { seconds: (s: number) => string; bytes: (b: number) => string } = {
    seconds: (s) => durationText(s * 1e9),
    bytes: bytesText,
  },
): string[][] {
  const rows = [
    [
      'current setup',
      units.seconds(r.stepTimeS),
      '',
      units.bytes(r.memory.peakBytesPerGpu),
      r.memory.fits ? 'yes' : 'no',
      '',
    ],
  ];
  for (const a of alternatives) {
    if (a.stepTimeS === undefined) continue;
    const change = ((100 * (a.stepTimeS - r.stepTimeS)) / r.stepTimeS).toFixed(1);
    rows.push([
      a.label,
      units.seconds(a.stepTimeS),
      `${Number(change) > 0 ? '+' : ''}${change}%`,
      units.bytes(a.peakBytesPerGpu ?? 0),
      a.fits ? 'yes' : 'no',
      a.sets.map((s) => `--set ${s}`).join(' '),
    ]);
  }
  return rows;
}

/** The simulator's notes on how the split lands on the hardware, if it gives any. */
function notesOf(r: StepResult): string[] {
  const n = (r as { notes?: unknown }).notes;
  return Array.isArray(n) ? n.filter((x): x is string => typeof x === 'string') : [];
}

/** Unequal pipeline stages in words, where the bottleneck line does not already say it. */
function unequalStages(r: StepResult): string | undefined {
  return r.bottleneck
    ? unequalStagesText(r.bottleneck, r.stageBalance, r.stepTimeS)
    : stageImbalanceText(r.stageBalance, r.stepTimeS);
}
