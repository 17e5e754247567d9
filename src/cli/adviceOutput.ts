import { SUMMARY_WIDTH, wrapAfter } from '../report/format.js';
import { candidateChanges, type Alternative } from '../advise/alternatives.js';
import { evaluateAlternatives, type ProfileSpec } from '../advise/evaluate.js';
import { loadScenarioFile } from '../scenario/load.js';
import type { Scenario } from '../scenario/resolve.js';
import type { StepResult } from '../sim/simulateStep.js';
import { bottleneckText, trafficName, unequalStagesText } from '../sim/stats/bottleneck.js';
import { formatBytes, formatSeconds } from './units.js';
import { table } from '../report/textTable.js';
import { ALTERNATIVES_HEADER, alternativeRows } from '../report/summary.js';

/**
 * Simulates the most promising changes to a scenario (see `candidateChanges`) on up to `jobs` threads; `adjust`
 * turns the raw file into what was simulated (imports and `--set` applied), and each alternative runs with the
 * same calibration profile, if any. When the current setup fits, a change that would not fit is not one to try:
 * it is left out, and the next candidate takes its place.
 */
export async function alternativesFor(
  file: string,
  adjust: (raw: unknown) => unknown,
  scenario: Scenario,
  result: StepResult,
  limit: number,
  opts: { jobs: number; onStart?: (label: string) => void; profile?: ProfileSpec },
): Promise<Alternative[]> {
  if (limit <= 0) return [];
  const f = loadScenarioFile(file);
  const job = {
    raw: adjust(f.raw),
    baseSets: [],
    source: f.source,
    baseDir: f.baseDir,
    candidates: candidateChanges(scenario, result),
    profile: opts.profile,
  };
  return evaluateAlternatives(job, limit, {
    ...opts,
    ...(result.memory.fits ? { keep: (a: Alternative) => a.fits === true } : {}),
  });
}

/**
 * The alternatives as a table, each row followed by the `--set` list that makes it (the how column of the HTML
 * report) on a line of its own, wrapped: a column of them ran the table to 190 characters.
 */
function alternativesTable(rows: readonly string[][]): string[] {
  const lines = table(
    ALTERNATIVES_HEADER.slice(0, -1),
    rows.map((r) => r.slice(0, -1)),
  ).split('\n');
  const how = rows.map((r) => r[r.length - 1]);
  return [
    lines[0],
    ...lines
      .slice(1)
      .flatMap((line, i) => [line, ...(how[i] === '' ? [] : wrapAfter('  ', how[i], SUMMARY_WIDTH - 4))]),
  ];
}

/** The bottleneck line, exposed communication by traffic, and the table of alternatives. */
export function formatAdvice(result: StepResult, alternatives: readonly Alternative[]): string {
  const b = result.bottleneck;
  const lines = ['', ...wrapAfter('  bottleneck: ', bottleneckText(b))];
  // Unequal stages cost time even where the bubble is not the largest loss: said on its own line then.
  const unequal = unequalStagesText(b, result.stageBalance, result.stepTimeS);
  if (unequal) lines.push(...wrapAfter('  unequal pipeline stages: ', unequal));
  const shown = b.exposure.filter((e) => e.exposedS / result.stepTimeS >= 0.005).slice(0, 4);
  if (shown.length > 0) {
    lines.push('  exposed communication by traffic:');
    for (const e of shown)
      lines.push(
        `    ${trafficName(e).padEnd(58)} ${formatSeconds(e.exposedS).padStart(10)}  ` +
          `${((100 * e.exposedS) / result.stepTimeS).toFixed(1)}%`,
      );
  }
  if (alternatives.length > 0) {
    lines.push('', '  what to try (each simulated):');
    lines.push(
      ...alternativesTable(alternativeRows(result, alternatives, { seconds: formatSeconds, bytes: formatBytes })).map(
        (l) => `    ${l}`,
      ),
    );
    // What would help: a faster setup that fits, or, when the current one does not fit, any that does.
    const helps = (a: Alternative) =>
      a.fits === true && (!result.memory.fits || (a.stepTimeS !== undefined && a.stepTimeS < result.stepTimeS));
    if (!alternatives.some(helps))
      lines.push(
        `    none of the ${alternatives.length} ${result.memory.fits ? 'is faster and fits' : 'fits'}: ` +
          'clustersim plan searches every split',
      );
  }
  return lines.join('\n');
}
