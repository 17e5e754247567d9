import { randomStream, standardNormalUnclamped, STANDARD_NORMAL_CLAMP, type RandomStream } from '../engine/random.js';
import type { StepSetup } from '../setup.js';

/**
 * GPUs of one model are not equally fast: manufacturing variability and power management make some run their
 * kernels slower than others, for the whole job (Sinha et al., "Not All GPUs Are Created Equal", SC22: 8% average
 * performance variation, outliers up to 1.5× the median, across V100 and MI60 clusters). Synchronous training waits
 * for the slowest: a TP collective for the slowest member of its group, the gradient reduction for the slowest
 * replica, a pipeline for its slowest stage. `noise.gpuSpeedSpread` is σ: each GPU's compute takes 1 + σ·z times as
 * long, z standard normal, drawn once per GPU.
 */

/**
 * E[max(-c, max of n standard normals)], c = STANDARD_NORMAL_CLAMP: the expected largest of n draws as `gpuSpeedDraw`
 * makes them (only the fast side is clamped, to keep 1 + σz positive). By numerical integration of
 * x · n·φ(x)·Φ(x)^(n−1); n = 2 gives 1/√π, n = 3 gives 3/(2√π).
 */
export function expectedMaxStandardNormal(n: number): number {
  if (!Number.isInteger(n) || n < 1)
    throw new RangeError(`expectedMaxStandardNormal: n must be a whole number ≥ 1, got ${n}`);
  let e = expectedMaxes.get(n);
  if (e === undefined) expectedMaxes.set(n, (e = integrateExpectedMax(n)));
  return e;
}

/** The compile asks for the same few n once per stage and TP rank, the summary and the notes again. */
const expectedMaxes = new Map<number, number>();

function integrateExpectedMax(n: number): number {
  const c = STANDARD_NORMAL_CLAMP;
  const lo = -9;
  const hi = 9;
  const steps = 18_000;
  const dx = (hi - lo) / steps;
  let sum = 0;
  for (let i = 0; i <= steps; i++) {
    const x = lo + i * dx;
    const density = n * normalPdf(x) * Math.pow(normalCdf(x), n - 1);
    sum += (i === 0 || i === steps ? 0.5 : 1) * Math.max(-c, x) * density;
  }
  return sum * dx;
}

function normalPdf(x: number): number {
  return Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
}

/** Φ(x) via the complementary error function (Numerical Recipes' erfc, relative error < 1.2e-7). */
function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * z);
  const erfc =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? 1 - 0.5 * erfc : 0.5 * erfc;
}

/**
 * How much longer each rank's compute takes than the model's figure, by rank. In full fidelity each GPU draws its own
 * factor from the seed, slow tail unclamped (Sinha et al. saw outliers 1.5× slower than the median). In symmetric
 * mode the simulated ranks stand for all: without a pipeline every GPU runs at the expected slowest of all of them
 * (exact: the step waits for the slowest at the gradient reduction, and a TP group at every collective). With a
 * pipeline (`symmetricStageFactors`) every stage runs at the expected slowest of its own GPUs and one stage, drawn from
 * the seed, at the slowest of all: an upper estimate of what full fidelity averages over seeds (1.07–1.76× on five
 * test pipelines), since the replicas really run their pipelines at their own speeds and meet only at the reduction.
 */
export function gpuSpeedFactors(
  setup: StepSetup,
  world: number,
  stageOf: (rank: number) => number = () => 0,
): (rank: number) => number {
  const sigma = setup.noise.gpuSpeedSpread ?? 0;
  if (sigma <= 0) return () => 1;
  if (setup.fidelity !== 'full') {
    const perStage = symmetricStageFactors(setup, world);
    return (rank) => perStage[stageOf(rank)];
  }
  const factors = new Map<number, number>();
  return (rank) => {
    let f = factors.get(rank);
    if (f === undefined) {
      f = 1 + sigma * gpuSpeedDraw(randomStream(setup.seed, `gpu-speed/rank-${rank}`));
      factors.set(rank, f);
    }
    return f;
  };
}

/** Symmetric mode's factor for each pipeline stage (see `gpuSpeedFactors`). */
export function symmetricStageFactors(setup: StepSetup, world: number): number[] {
  const sigma = setup.noise.gpuSpeedSpread ?? 0;
  const pp = setup.parallel.pp;
  // Every stage at the expected slowest of its own GPUs (a stage waits for its slowest TP member, and the gradient
  // reduction for its slowest replica); one stage, drawn from the seed, holds the slowest of all the GPUs, which is
  // what a pipeline of equal stages waits for.
  const perStage = 1 + sigma * expectedMaxStandardNormal(Math.max(1, Math.round(world / pp)));
  const factors = new Array<number>(pp).fill(perStage);
  factors[Math.floor(randomStream(setup.seed, 'gpu-speed/slowest-stage').next() * pp)] =
    1 + sigma * expectedMaxStandardNormal(world);
  return factors;
}

/**
 * A standard normal draw clamped on the fast side only, at −STANDARD_NORMAL_CLAMP (1 + σz stays positive for σ ≤ 0.3).
 */
function gpuSpeedDraw(rng: RandomStream): number {
  return Math.max(-STANDARD_NORMAL_CLAMP, standardNormalUnclamped(rng));
}
