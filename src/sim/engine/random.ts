import seedrandom from 'seedrandom';

/** A seeded random stream; all randomness in the simulator comes from one of these. */
export interface RandomStream {
  /** Uniform in [0, 1). */
  next(): number;
}

/**
 * Derives an independent stream for one component from the scenario seed and a label, so adding a
 * component (a new label) never shifts the numbers another component draws.
 */
export function randomStream(seed: number, label: string): RandomStream {
  const rng = seedrandom(`${seed}:${label}`);
  return { next: () => rng() };
}
