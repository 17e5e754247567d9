import { withProfile } from '../calibrate/applyProfile.js';
import type { Profile } from '../calibrate/profile.js';
import { applyOverrides } from '../scenario/load.js';
import { resolveScenario } from '../scenario/resolve.js';
import { simulateStep } from '../sim/simulateStep.js';
import { compiledWorker, runTasks } from '../threads/taskPool.js';
import type { Alternative, Candidate } from './alternatives.js';

/** A calibration profile and the file it came from, applied to every alternative as to the current setup. */
export interface ProfileSpec {
  profile: Profile;
  path: string;
}

/** Everything an alternative's simulation needs, plain data so that a worker thread can be given it. */
export interface AlternativesJob {
  /** The scenario file's raw content with the imports applied. */
  raw: unknown;
  /** Overrides every candidate is applied on top of (the user's `--set`). */
  baseSets: string[];
  source: string;
  baseDir: string;
  candidates: Candidate[];
  profile?: ProfileSpec;
}

/** Simulates candidate `i` of the job; a candidate that cannot be built comes back with its `error`. */
export function evaluateCandidate(job: AlternativesJob, i: number): Alternative {
  const c = job.candidates[i];
  try {
    const resolved = resolveScenario(applyOverrides(job.raw, [...job.baseSets, ...c.sets]), job.source, job.baseDir);
    const s = job.profile ? withProfile(resolved, job.profile.profile, job.profile.path).scenario : resolved;
    const r = simulateStep(s).result;
    return { ...c, stepTimeS: r.stepTimeS, peakBytesPerGpu: r.memory.peakBytesPerGpu, fits: r.memory.fits };
  } catch (err) {
    return { ...c, error: (err as Error).message.split('\n').slice(-1)[0].trim() };
  }
}

/**
 * Simulates candidates in order until `limit` of them could be simulated and are worth showing (those that cannot be
 * built, and those `keep` turns down, do not count), on up to `jobs` threads, and returns those. While fewer than
 * `limit` count, the next (limit − counted so far) candidates run side by side: the very ones a one-by-one loop would
 * reach before it could stop, so the result is that loop's whatever `jobs` says.
 */
export async function evaluateAlternatives(
  job: AlternativesJob,
  limit: number,
  opts: { jobs: number; onStart?: (label: string) => void; keep?: (a: Alternative) => boolean },
): Promise<Alternative[]> {
  const worker = compiledWorker(new URL('./alternativeWorker.js', import.meta.url));
  const out: Alternative[] = [];
  let next = 0;
  while (next < job.candidates.length && out.length < limit) {
    const ids = Array.from({ length: Math.min(limit - out.length, job.candidates.length - next) }, (_, k) => next + k);
    next += ids.length;
    for (const id of ids) opts.onStart?.(job.candidates[id].label);
    const { results } = await runTasks<AlternativesJob, Alternative>({
      jobs: opts.jobs,
      worker,
      job,
      ids,
      runHere: (id) => evaluateCandidate(job, id),
    });
    for (const id of ids)
      if (results[id].stepTimeS !== undefined && (opts.keep?.(results[id]) ?? true)) out.push(results[id]);
  }
  return out;
}
