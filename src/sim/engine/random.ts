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

/** Where `standardNormal` clamps its draws. */
export const STANDARD_NORMAL_CLAMP = 3;

/** A standard normal draw (Box–Muller; |z| < 7.5). */
export function standardNormalUnclamped(rng: RandomStream): number {
  const u = Math.max(rng.next(), 1e-12);
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** A standard normal draw, truncated to ±3 so a factor 1 + σ·z stays positive for σ ≤ 0.3. */
export function standardNormal(rng: RandomStream): number {
  const z = standardNormalUnclamped(rng);
  return Math.max(-STANDARD_NORMAL_CLAMP, Math.min(STANDARD_NORMAL_CLAMP, z));
}

/** Multiplies durations by 1 + σ·z (z standard normal), never below 5% of the original. */
export function jitterer(seed: number, label: string, sigma: number): (durationNs: number) => number {
  if (sigma <= 0) return (d) => d;
  const rng = randomStream(seed, label);
  return (d) => Math.round(d * Math.max(0.05, 1 + sigma * standardNormal(rng)));
}
