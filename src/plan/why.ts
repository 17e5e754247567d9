import type { Simulated } from './evaluate.js';

/** The parts of a step (StepResult's breakdown) a winner can save on, with how to say each. */
const PARTS = [
  ['computeS', 'compute'],
  ['exposedCommS', 'exposed communication'],
  ['bubbleS', 'pipeline bubble'],
  ['hostOptimizerS', 'host optimizer step'],
  ['idleS', 'idle time'],
] as const;

export interface PartDifference {
  part: string;
  /** The other's time minus the winner's, s (positive: the winner spends less). */
  savedS: number;
}

/** Where the winner's step is shorter or longer than another's, largest saving first. */
export function partDifferences(winner: Simulated, other: Simulated): PartDifference[] {
  return PARTS.map(([key, part]) => ({ part, savedS: other.breakdown[key] - winner.breakdown[key] }))
    .filter((d) => Math.abs(d.savedS) > 1e-9)
    .sort((a, b) => b.savedS - a.savedS || a.part.localeCompare(b.part));
}

/**
 * Why the winner beats another setup, in a clause: the parts it saves most on and the one it pays more for, e.g.
 * `0.45 s less pipeline bubble and 0.20 s less exposed communication, for 0.10 s more compute`.
 */
export function whyClause(winner: Simulated, other: Simulated, seconds: (s: number) => string): string {
  const diffs = partDifferences(winner, other);
  const saved = diffs
    .filter((d) => d.savedS > 0)
    .slice(0, 2)
    .map((d) => `${seconds(d.savedS)} less ${d.part}`);
  const paid = diffs.filter((d) => d.savedS < 0).sort((a, b) => a.savedS - b.savedS)[0];
  const cost = paid && -paid.savedS > 0.01 * winner.stepTimeS ? `, for ${seconds(-paid.savedS)} more ${paid.part}` : '';
  return saved.length > 0 ? `${saved.join(' and ')}${cost}` : 'the same parts, in a shorter step';
}
