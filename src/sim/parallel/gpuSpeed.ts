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
  return stageOrderStatistics(n, 1)[0];
}

function normalPdf(x: number): number {
  return Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
}

/** Φ(x) via the complementary error function (Numerical Recipes' erfc, relative error < 1.2e-7). */
function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * z);
  const erfc = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0 ? 1 - 0.5 * erfc : 0.5 * erfc;
}

/**
 * Expected values of the order statistics, largest first, of `stages` independent maxima of `n` standard normals (each
 * drawn as `gpuSpeedDraw` makes them): the slowest GPU of each pipeline stage, ranked over the stages. With one stage
 * this is `expectedMaxStandardNormal(n)`; the first of pp stages is the expected slowest of all pp·n GPUs.
 */
export function stageOrderStatistics(n: number, stages: number): number[] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`expected a whole number of GPUs ≥ 1, got ${n}`);
  if (stages === 0) return [];
  if (!Number.isInteger(stages) || stages < 1) throw new RangeError(`stageOrderStatistics: stages must be a whole number ≥ 1, got ${stages}`);
  const c = STANDARD_NORMAL_CLAMP;
  const lo = -9;
  const hi = 9;
  const steps = 18_000;
  const dx = (hi - lo) / steps;
  const out = new Array<number>(stages).fill(0);
  // log C(stages − 1, k − 1) for k = 1 .. stages
  const logChoose: number[] = [0];
  for (let j = 1; j < stages; j++) logChoose.push(logChoose[j - 1] + Math.log(stages - j) - Math.log(j));
  for (let i = 0; i <= steps; i++) {
    const x = lo + i * dx;
    const cdf = Math.pow(normalCdf(x), n);
    const density = n * normalPdf(x) * Math.pow(normalCdf(x), n - 1);
    if (density === 0) continue;
    const w = (i === 0 || i === steps ? 0.5 : 1) * Math.max(-c, x) * density * dx * stages;
    for (let k = 1; k <= stages; k++) {
      // k-th largest: k − 1 above x, stages − k below.
      const logP = logChoose[k - 1] + (stages - k) * Math.log(Math.max(cdf, 1e-300)) + (k - 1) * Math.log(Math.max(1 - cdf, 1e-300));
      out[k - 1] += w * Math.exp(logP);
    }
  }
  return out;
}

/**
 * How much longer each rank's compute takes than the model's figure, by rank. In full fidelity each GPU draws its own
 * factor from the seed, slow tail unclamped (Sinha et al. saw outliers 1.5× slower than the median). In symmetric
 * mode the simulated replica stands for the slowest one, and a TP group (with its cp ranks) waits for its slowest
 * member at every collective. Without a pipeline every GPU then runs at the expected slowest of all the GPUs. With
 * one, the replica's stages differ: the stage holding the slowest of all the GPUs runs at its expectation, the others
 * at the expected order statistics of pp − 1 maxima of their tp·cp GPUs, dealt to the stages in an order drawn from
 * the seed (`symmetricStageFactors`): one representative draw, in which the simulation finds the bounding stage.
 * Over seeds it averages what full fidelity does, balanced stages or not (tested within 25%).
 */
export function gpuSpeedFactors(setup: StepSetup, world: number, stageOf: (rank: number) => number = () => 0): (rank: number) => number {
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
  // The simulated replica stands for the slowest: the one holding the slowest of all the GPUs. Its other stages are
  // ordinary ones, each the slowest of its tp·cp GPUs (the replicas run their pipelines apart, and meet only at the
  // gradient reduction).
  const perReplicaStage = Math.max(1, Math.round(world / (pp * setup.parallel.dp)));
  const ranked = [expectedMaxStandardNormal(world), ...stageOrderStatistics(perReplicaStage, pp - 1)];
  // Fisher–Yates over the stages, from the seed.
  const order = Array.from({ length: pp }, (_, i) => i);
  const rng = randomStream(setup.seed, 'gpu-speed/stage-order');
  for (let i = pp - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order.map((k) => 1 + sigma * ranked[k]);
}

/** A standard normal draw clamped on the fast side only, at −STANDARD_NORMAL_CLAMP (1 + σz stays positive for σ ≤ 0.3). */
function gpuSpeedDraw(rng: RandomStream): number {
  return Math.max(-STANDARD_NORMAL_CLAMP, standardNormalUnclamped(rng));
}
