import type { ImportOptions } from '../scenario/importSettings.js';
import type { Scenario } from '../scenario/resolve.js';
import { MAX_GPUS } from '../scenario/simulationLimits.js';
import { defaultSpace, narrowSpace, SpaceSyntaxError, type PlanSpace } from '../plan/space.js';
import type { Objective } from '../plan/objective.js';
import { parseShard, ShardSyntaxError, type Shard } from '../sweep/grid.js';
import { parseGpuCounts } from '../sweep/scaleMath.js';
import { UsageError } from './usageError.js';

/** The options of `plan` as commander parses them: text, read by the functions below. */
export interface PlanOptions extends ImportOptions {
  set: string[];
  gpus?: string;
  space: string[];
  fix: string[];
  top: string;
  jobs?: string;
  json?: boolean;
  csv?: string;
  write?: string;
  report?: string;
  tokens?: string;
  price?: string;
  profile?: string;
  objective: Objective;
  shard?: string;
  out?: string;
}

const SUFFIX: Record<string, number> = { '': 1, K: 1e3, M: 1e6, B: 1e9, G: 1e9, T: 1e12 };

/** Reads `--tokens`: a count with an optional K, M, B (or G) or T suffix, e.g. 2T or 1.5e12. */
export function parseTokens(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([KMBGT]?)\s*$/i.exec(text);
  const n = m ? Number(m[1]) * SUFFIX[m[2].toUpperCase()] : NaN;
  if (!(n >= 1) || !Number.isFinite(n) || n > 1e18)
    throw new UsageError(`--tokens: '${text}' is not a token count; give e.g. 2T, 300B or 1.5e12 (from 1 to 1e18)`);
  return n;
}

/** Reads `--price`: the price of one GPU-hour, above 0. */
export function parsePrice(text: string): number {
  const n = Number(text);
  if (!/^\s*\d+(\.\d+)?\s*$/.test(text) || !(n > 0) || n > 1e6)
    throw new UsageError(`--price: '${text}' is not a price per GPU-hour; give a number above 0, e.g. 2.5`);
  return n;
}

/** Reads `--top`: how many of the best estimates to simulate in full, 1 to 100. */
export function parseTop(text: string): number {
  if (!/^\s*\d+\s*$/.test(text) || Number(text) < 1 || Number(text) > 100)
    throw new UsageError(
      `--top: '${text}' is not a count of setups to simulate in full; give a whole number from 1 to 100`,
    );
  return Number(text);
}

/** Reads `--gpus`: one count or several (`64,128` or the doubling `64..1024`), each of whole nodes (or under one). */
export function parseGpus(text: string | undefined, s: Scenario): number[] {
  const perNode = s.cluster.node.gpusPerNode;
  if (text === undefined) return [s.cluster.nodes * perNode];
  let counts: number[];
  try {
    counts = parseGpuCounts(text);
  } catch (err) {
    if (err instanceof RangeError) throw new UsageError(`--gpus: ${err.message}`);
    throw err;
  }
  for (const gpus of counts) {
    if (gpus > MAX_GPUS) throw new UsageError(`--gpus: ${gpus} is more than the ${MAX_GPUS} GPUs the simulator takes`);
    if (gpus > perNode && gpus % perNode !== 0)
      throw new UsageError(
        `--gpus: ${gpus} GPUs are not whole nodes of ${perNode} (${s.cluster.node.name}); give multiples of ${perNode}`,
      );
  }
  return counts;
}

/** Reads `--shard` (one GPU count, and none of the outputs that belong to merge); undefined without it. */
export function shardOf(opts: PlanOptions, sizes: readonly number[]): Shard | undefined {
  if (opts.shard === undefined) {
    if (opts.out !== undefined)
      throw new UsageError('--out: only with --shard (the part it writes); without --shard the answer is printed');
    return undefined;
  }
  let shard: Shard;
  try {
    shard = parseShard(opts.shard);
  } catch (err) {
    if (err instanceof ShardSyntaxError) throw new UsageError(`--shard: ${err.message}`);
    throw err;
  }
  if (sizes.length > 1)
    throw new UsageError('--shard: plans one GPU count; give --gpus a single count (run one sharded plan per count)');
  const merged = (['json', 'csv', 'write', 'report'] as const).filter((o) => opts[o] !== undefined);
  if (merged.length > 0)
    throw new UsageError(
      `--shard: ${merged.map((o) => `--${o}`).join(', ')} belong to clustersim merge, which joins the parts`,
    );
  return shard;
}

/** The space to search: the scenario's default narrowed by `--space` and `--fix`. */
export function spaceOf(s: Scenario, opts: PlanOptions): PlanSpace {
  try {
    return narrowSpace(defaultSpace(s), opts.space, opts.fix);
  } catch (err) {
    if (err instanceof SpaceSyntaxError) throw new UsageError(`--space/--fix: ${err.message}`);
    throw err;
  }
}
