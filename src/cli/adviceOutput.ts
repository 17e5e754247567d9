import { candidateChanges, evaluateAlternatives, type Alternative } from '../advise/alternatives.js';
import { loadScenarioFile } from '../scenario/load.js';
import type { Scenario } from '../scenario/resolve.js';
import type { StepResult } from '../sim/simulateStep.js';
import { trafficName } from '../sim/stats/bottleneck.js';
import { formatBytes, formatSeconds } from './units.js';
import { table } from './output.js';
import { ALTERNATIVES_HEADER, alternativeRows } from '../report/summary.js';

/**
 * Simulates the most promising changes to a scenario (see `candidateChanges`); `adjust` turns the raw
 * file into what was simulated (imports and `--set` applied).
 */
export function alternativesFor(
  file: string,
  adjust: (raw: unknown) => unknown,
  scenario: Scenario,
  result: StepResult,
  limit: number,
  onStart?: (label: string) => void,
  prepare?: (s: Scenario) => Scenario,
): Alternative[] {
  if (limit <= 0) return [];
  const f = loadScenarioFile(file);
  // Each alternative runs on what the current setup ran on: `prepare` applies the same --profile.
  return evaluateAlternatives(adjust(f.raw), [], f.source, f.baseDir, candidateChanges(scenario, result), limit, onStart, prepare);
}

/** The bottleneck line, exposed communication by traffic, and the table of alternatives. */
export function formatAdvice(result: StepResult, alternatives: readonly Alternative[]): string {
  const b = result.bottleneck;
  const lines = ['', `  bottleneck: ${b.bound} — ${b.detail}`];
  const shown = b.exposure.filter((e) => e.exposedS / result.stepTimeS >= 0.005).slice(0, 4);
  if (shown.length > 0) {
    lines.push('  exposed communication by traffic:');
    for (const e of shown) lines.push(`    ${trafficName(e).padEnd(58)} ${formatSeconds(e.exposedS).padStart(10)}  ${((100 * e.exposedS) / result.stepTimeS).toFixed(1)}%`);
  }
  if (alternatives.length > 0) {
    lines.push('', '  what to try (each simulated):');
    const rows = alternativeRows(result, alternatives, { seconds: formatSeconds, bytes: formatBytes });
    lines.push(table(ALTERNATIVES_HEADER, rows).split('\n').map((l) => `    ${l}`).join('\n'));
  }
  return lines.join('\n');
}
