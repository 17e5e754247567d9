import { writeFileAtomic } from '../atomicWrite.js';
import { makeFolders } from './outputFile.js';
import { dirname, resolve } from 'node:path';
import { loadScenarioFile } from '../scenario/load.js';
import type { Command } from 'commander';
import type { StepRun } from '../sim/simulateStep.js';
import type { Scenario } from '../scenario/resolve.js';
import { VERSION } from '../version.js';
import { fileWriteErrorReason } from '../fileErrors.js';
import { formatBytes } from './units.js';
import { UsageError } from './usageError.js';
import type { Output } from './output.js';
import type { Alternative } from '../advise/alternatives.js';
import { checkDistinctFiles, prepareOutputFile, type NamedPath } from './outputFile.js';
import type { ImportOptions } from '../scenario/importSettings.js';
import {
  defaultRanks,
  parseRankList,
  parseStreamList,
  pipelineStageRanks,
  RankNotSimulatedError,
  RankSelectionError,
  simulatedRanks,
  usedStreams,
} from '../report/ranks.js';
import type { StepView } from '../report/reports.js';
import type { ScenarioLabel } from '../report/summary.js';

/** Options that turn a simulated step into files. */
export interface StepFileOptions {
  timeline?: string;
  report?: string;
  trace?: string;
  memoryChart?: string;
  ranks?: string;
  streams?: string;
}

/** Most ranks a timeline draws; a trace takes any number. */
export const TIMELINE_MAX_RANKS = 64;

/** Writes a report file (creating its folder), and says so on stderr so that stdout stays as it was. */
export function writeReportFile(path: string, text: string, io: Output): void {
  try {
    makeFolders(dirname(path));
    writeFileAtomic(path, text);
  } catch (err) {
    throw new UsageError(`cannot write '${path}': ${fileWriteErrorReason(err, path)}`);
  }
  io.err(`wrote ${path} (${formatBytes(Buffer.byteLength(text))})`);
}

function selection<T>(option: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof RankNotSimulatedError)
      throw new UsageError(`${option}: ${err.message}; --set simulation.fidelity=full simulates every rank`);
    if (err instanceof RankSelectionError) throw new UsageError(`${option}: ${err.message}`);
    throw err;
  }
}

/** How reports name a scenario, and the calibration profile its run used, if any. */
export function labelOf(scenario: Scenario, profile?: ScenarioLabel['profile']): ScenarioLabel {
  return {
    name: scenario.name,
    modelName: scenario.model.name,
    clusterName: scenario.cluster.name,
    gpusPerNode: scenario.cluster.node.gpusPerNode,
    ...(profile ? { profile } : {}),
  };
}

/** The ranks that exist in a scenario's run: one per GPU (tp × pp × dp uses every GPU of the cluster). */
function worldSize(scenario: Scenario): number {
  return scenario.cluster.nodes * scenario.cluster.node.gpusPerNode;
}

function checkTimelineRankCount(count: number, opts: StepFileOptions): void {
  if ((opts.timeline || opts.report) && count > TIMELINE_MAX_RANKS) {
    throw new UsageError(
      `--ranks: a timeline shows at most ${TIMELINE_MAX_RANKS} ranks (${count} asked); ` +
        'pick fewer, or use --trace for all of them',
    );
  }
}

/**
 * Checks every output file given, as [path or undefined, its flag], before the work that fills them starts: each can
 * be written, and none is one of the `inputs` ([path or undefined, what it is]) or another output.
 */
export function checkOutputFiles(files: NamedPath[], inputs: readonly NamedPath[] = []): void {
  checkDistinctFiles(files, inputs);
  for (const [path, flag] of files) if (path !== undefined) prepareOutputFile(path, flag);
}

/**
 * The files a scenario's command line reads: the scenarios and the files they name (model.hfConfig,
 * comm.measured[].file), and the imports and profile when given.
 */
export function commandLineInputs(
  scenarioFiles: readonly string[],
  opts: ImportOptions & { profile?: string },
): NamedPath[] {
  return [
    ...scenarioFiles.flatMap((f): NamedPath[] => [[f, 'a scenario file'], ...filesScenarioNames(f)]),
    [opts.megatronArgs?.startsWith('@') ? opts.megatronArgs.slice(1) : undefined, 'the --megatron-args file'],
    [opts.deepspeedConfig, 'the --deepspeed-config file'],
    [opts.profile, 'the --profile file'],
  ];
}

/**
 * The files a scenario file names, as [path, what]: its Hugging Face config and measured collective tables, looked up
 * from the scenario's folder. A scenario that cannot be read names none here; reading it later reports why.
 */
function filesScenarioNames(file: string): NamedPath[] {
  let loaded: ReturnType<typeof loadScenarioFile>;
  try {
    loaded = loadScenarioFile(file);
  } catch {
    return [];
  }
  const raw = loaded.raw as { model?: { hfConfig?: unknown }; comm?: { measured?: unknown } };
  const named: NamedPath[] = [];
  const at = (p: unknown, what: string) => {
    if (typeof p === 'string') named.push([resolve(loaded.baseDir, p), `the file ${what} names`]);
  };
  at(raw.model?.hfConfig, 'model.hfConfig');
  if (Array.isArray(raw.comm?.measured))
    raw.comm.measured.forEach((m: unknown, i) => at((m as { file?: unknown } | null)?.file, `comm.measured.${i}.file`));
  return named;
}

/**
 * Refuses bad output paths, and a bad `--ranks` or `--streams`, before anything is simulated: which ranks exist is
 * known once the scenario is resolved, so a typo costs no simulation and prints no summary. (Whether a rank was
 * simulated or mirrored is known only after the run; {@link stepFilesView} checks that.)
 */
export function checkStepFileOptions(
  scenario: Scenario,
  opts: StepFileOptions,
  inputs: readonly NamedPath[] = [],
): void {
  checkOutputFiles(
    [
      [opts.timeline, '--timeline'],
      [opts.report, '--report'],
      [opts.trace, '--trace'],
      [opts.memoryChart, '--memory-chart'],
    ],
    inputs,
  );
  // They choose what a timeline or trace shows; without one they would be ignored without a word.
  if (opts.ranks !== undefined && !opts.timeline && !opts.report && !opts.trace)
    throw new UsageError('--ranks: picks what --timeline, --report or --trace show; give one of them too');
  if (opts.streams !== undefined && !opts.timeline && !opts.report)
    throw new UsageError('--streams: picks what --timeline or --report show; give one of them too');
  if (opts.ranks)
    checkTimelineRankCount(selection('--ranks', () => parseRankList(opts.ranks!, worldSize(scenario))).length, opts);
  if (opts.streams) selection('--streams', () => parseStreamList(opts.streams!));
}

/**
 * What the timeline of a run shows: `--ranks` (default: rank 0, one rank per pipeline stage, the slowest
 * rank and a rank on the last node) and `--streams` (default: the streams that have work).
 */
export function stepView(
  scenario: Scenario,
  run: Pick<StepRun, 'trace' | 'result'>,
  opts: StepFileOptions,
  profile?: ScenarioLabel['profile'],
): StepView {
  const gpusPerNode = scenario.cluster.node.gpusPerNode;
  const rankCount = run.trace.program.rankCount;
  const ranks = opts.ranks
    ? selection('--ranks', () => parseRankList(opts.ranks!, rankCount, simulatedRanks(run.trace)))
    : defaultRanks({ trace: run.trace, gpusPerNode, stages: pipelineStageRanks(scenario.parallel) });
  const streams = opts.streams ? selection('--streams', () => parseStreamList(opts.streams!)) : usedStreams(run.trace);
  return { label: labelOf(scenario, profile), trace: run.trace, result: run.result, ranks, streams };
}

/**
 * The view the timeline, report and trace files draw, when one of them is asked for; call it before printing
 * the summary, so that a rank that was not simulated is refused with nothing on stdout. A stream `--streams` names
 * that has no work in this run (tp with tp 1) is warned of: its lanes would be drawn empty.
 */
export function stepFilesView(
  scenario: Scenario,
  run: Pick<StepRun, 'trace' | 'result'>,
  opts: StepFileOptions,
  io: Output,
  profile?: ScenarioLabel['profile'],
): StepView | undefined {
  if (!opts.timeline && !opts.report && !opts.trace) return undefined;
  const view = stepView(scenario, run, opts, profile);
  checkTimelineRankCount(view.ranks.length, opts);
  if (opts.streams) {
    const used = usedStreams(run.trace);
    const idle = view.streams.filter((s) => !used.includes(s));
    if (idle.length > 0)
      io.err(
        `clustersim: warning: --streams: ${idle.join(', ')} ${idle.length > 1 ? 'have' : 'has'} no work in this run, ` +
          `so ${idle.length > 1 ? 'their' : 'its'} lanes are empty (streams with work: ${used.join(', ')})`,
      );
  }
  return view;
}

/**
 * The report renderers (d3 + jsdom) take about a second to load, so they are imported only when a file
 * is asked for, keeping plain `simulate` and `--json` quick to start.
 */
export function loadReports(): Promise<typeof import('../report/reports.js')> {
  return import('../report/reports.js');
}

/**
 * Writes the files `--timeline`, `--report`, `--trace` and `--memory-chart` ask for; `view` is {@link stepFilesView}'s.
 */
export async function writeStepFiles(
  scenario: Scenario,
  run: Pick<StepRun, 'trace' | 'result'>,
  opts: StepFileOptions,
  view: StepView | undefined,
  io: Output,
  alternatives: readonly Alternative[] = [],
): Promise<void> {
  if (!opts.memoryChart && !view) return;
  const { simulateReportHtml, stepMemorySvg, stepTimelineSvg } = await loadReports();
  if (opts.memoryChart)
    writeReportFile(
      opts.memoryChart,
      stepMemorySvg({ label: view?.label ?? labelOf(scenario), result: run.result }),
      io,
    );
  if (!view) return;
  const timeline = opts.timeline || opts.report ? stepTimelineSvg(view) : '';
  if (opts.timeline) writeReportFile(opts.timeline, timeline, io);
  if (opts.report)
    writeReportFile(
      opts.report,
      simulateReportHtml(view, `clustersim ${VERSION} simulate`, timeline, alternatives),
      io,
    );
  if (opts.trace) {
    const { chromeTraceJson, toChromeTrace } = await import('../report/chromeTrace.js');
    const ranks = opts.ranks ? view.ranks : undefined;
    const meta = {
      scenario: scenario.name,
      seed: run.result.seed,
      version: VERSION,
      stepTimeS: run.result.stepTimeS,
      ...(view.label.profile ? { profile: view.label.profile.file } : {}),
    };
    writeReportFile(
      opts.trace,
      chromeTraceJson(toChromeTrace({ trace: run.trace, ranks, gpusPerNode: scenario.cluster.node.gpusPerNode, meta })),
      io,
    );
  }
}

/** Adds `--timeline`, `--report`, `--trace`, `--memory-chart`, `--ranks` and `--streams` to a command. */
export function addStepFileOptions(cmd: Command): Command {
  return cmd
    .option('--timeline <file.svg>', 'write an SVG timeline: one lane per rank and stream, bars by task kind')
    .option('--report <file.html>', 'write a self-contained HTML report (summary, timeline, memory chart)')
    .option(
      '--trace <file.json>',
      'write a Chrome/Perfetto trace (Trace Event Format; every simulated rank unless --ranks)',
    )
    .option('--memory-chart <file.svg>', 'write an SVG chart of memory per GPU (per pipeline stage) against capacity')
    .option(
      '--ranks <list>',
      'ranks for the timeline and trace, e.g. 0-15 or 0,8,120 (default: rank 0, one per pipeline stage, the slowest, ' +
        'one on the last node)',
    )
    .option('--streams <list>', 'streams for the timeline, e.g. compute,comm (default: those with work)');
}
