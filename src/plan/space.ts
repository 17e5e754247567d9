import type { Scenario } from '../scenario/resolve.js';

/**
 * The values a plan searches for each setting. A default follows from the scenario (its model, node and
 * framework); `--space name=a,b` replaces one, `--fix name=a` holds one at a single value.
 */
export interface PlanSpace {
  tp: number[];
  cp: number[];
  pp: number[];
  microBatch: number[];
  schedule: PipelineSchedule[];
  /** Model chunks per stage for the interleaved schedule; undefined: those of `defaultVirtualStages`. */
  virtualStages?: number[];
  recompute: Recompute[];
  zero: ZeroStage[];
  offload: Offload[];
  /** With tp > 1 (undefined: on, as Megatron runs tensor parallelism, wherever the tp style has it). */
  sequenceParallel?: boolean[];
  tpCommOverlap: boolean[];
  /** Expert-parallel sizes, for a model with experts (undefined: a dense model, nothing to search). */
  ep?: number[];
  /** How tokens reach their experts where ep > 1 (undefined: a dense model); the scenario's own by default. */
  dispatcher?: Dispatcher[];
  /** Combined 1F1B where ep > 1 and there is no pipeline (undefined: a dense model); the scenario's by default. */
  moeOverlap?: boolean[];
}

export type Dispatcher = 'alltoall' | 'deepep';

export type PipelineSchedule = '1f1b' | 'interleaved';
export type Recompute = 'none' | 'selective' | 'full';
export type ZeroStage = 0 | 1 | 2 | 3;
export type Offload = 'none' | 'cpu';

/** The names `--space` and `--fix` take, with the scenario field each sets. */
export const SPACE_FIELDS = {
  tp: 'parallel.tp',
  cp: 'parallel.cp',
  pp: 'parallel.pp',
  microBatch: 'training.microBatch',
  schedule: 'parallel.schedule',
  virtualStages: 'parallel.virtualStages',
  recompute: 'parallel.recompute',
  zero: 'parallel.zero',
  offload: 'parallel.offload',
  sequenceParallel: 'parallel.sequenceParallel',
  tpCommOverlap: 'parallel.tpCommOverlap',
  ep: 'parallel.ep',
  dispatcher: 'parallel.dispatcher',
  moeOverlap: 'parallel.moeOverlap',
} as const satisfies Record<keyof PlanSpace, string>;

export type SpaceName = keyof typeof SPACE_FIELDS;

/** The largest micro-batch the default space tries. */
export const MAX_DEFAULT_MICRO_BATCH = 16;
/** The most model chunks per stage the default space tries (Megatron's papers go to 8 or one layer per chunk). */
export const MAX_DEFAULT_VIRTUAL_STAGES = 8;
/** From this sequence length on, the default space tries context parallelism (NVIDIA's 8K-token recipes use cp 2). */
export const CP_FROM_SEQ_LEN = 8192;

const powersOfTwoUpTo = (n: number): number[] => {
  const out: number[] = [];
  for (let v = 1; v <= n; v *= 2) out.push(v);
  return out;
};

/**
 * The default space for a scenario: tensor parallelism in powers of 2 inside one node that divide the heads, the
 * key/value heads and the FFN width (Megatron's requirement); context parallelism 1, 2 and 4 from `CP_FROM_SEQ_LEN`
 * tokens where it is modelled (fused attention, no framework); any pipeline depth; micro-batches of 1 to
 * `MAX_DEFAULT_MICRO_BATCH`; 1F1B and interleaved (GPipe takes the bubble of 1F1B with more activations in flight);
 * every recomputation, ZeRO stage and offload; TP communication overlap as the scenario has it.
 */
export function defaultSpace(s: Scenario): PlanSpace {
  const m = s.model;
  const t = s.training;
  const divides = (tp: number) =>
    m.arch === 'mlp' || (m.heads % tp === 0 && m.kvHeads % tp === 0 && m.ffnHidden % tp === 0);
  const seqLen = t.seqLen ?? m.seqLen;
  const cpAllowed = m.arch !== 'mlp' && t.flashAttention && t.framework === 'none' && seqLen >= CP_FROM_SEQ_LEN;
  return {
    tp: powersOfTwoUpTo(s.cluster.node.gpusPerNode).filter(divides),
    cp: cpAllowed ? [1, 2, 4] : [1],
    pp: Array.from({ length: m.layers }, (_, i) => i + 1),
    microBatch: powersOfTwoUpTo(MAX_DEFAULT_MICRO_BATCH),
    schedule: ['1f1b', 'interleaved'],
    recompute: ['none', 'selective', 'full'],
    // Experts run as Megatron-Core runs them: without ZeRO-2 and ZeRO-3 (moeChecks.ts refuses them).
    zero: m.moe ? [0, 1] : [0, 1, 2, 3],
    offload: ['none', 'cpu'],
    tpCommOverlap: [s.parallel.tpCommOverlap !== undefined],
    // Every power-of-2 split of the experts; the layouts keep those that fold into the stage's ranks.
    ...(m.moe ? { ep: powersOfTwoUpTo(m.moe.experts).filter((ep) => m.moe!.experts % ep === 0) } : {}),
    // The scenario's dispatcher; `--space dispatcher=alltoall,deepep` compares the two.
    ...(m.moe
      ? { dispatcher: [s.parallel.dispatcher ?? 'alltoall'], moeOverlap: [s.parallel.moeOverlap === true] }
      : {}),
  };
}

/**
 * Chunks per stage the default space tries: those from 2 to `MAX_DEFAULT_VIRTUAL_STAGES` that split `layersPerStage`.
 */
export function defaultVirtualStages(layersPerStage: number): number[] {
  return Array.from({ length: MAX_DEFAULT_VIRTUAL_STAGES - 1 }, (_, i) => i + 2).filter(
    (v) => layersPerStage % v === 0,
  );
}

/** A `--space` or `--fix` value that is not one of the allowed. */
export class SpaceSyntaxError extends Error {}

const ENUMS: Partial<Record<SpaceName, readonly string[]>> = {
  schedule: ['1f1b', 'interleaved'],
  recompute: ['none', 'selective', 'full'],
  offload: ['none', 'cpu'],
  sequenceParallel: ['true', 'false'],
  tpCommOverlap: ['true', 'false'],
  zero: ['0', '1', '2', '3'],
  dispatcher: ['alltoall', 'deepep'],
  moeOverlap: ['true', 'false'],
};

function parseValue(name: SpaceName, text: string): number | string | boolean {
  const allowed = ENUMS[name];
  if (allowed) {
    if (!allowed.includes(text)) throw new SpaceSyntaxError(`${name}: '${text}' is not one of ${allowed.join(', ')}`);
    if (name === 'zero') return Number(text);
    return name === 'sequenceParallel' || name === 'tpCommOverlap' || name === 'moeOverlap' ? text === 'true' : text;
  }
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 1e6)
    throw new SpaceSyntaxError(`${name}: '${text}' is not a whole number from 1 to 1000000`);
  return Number(text);
}

/** The name of a `--space`/`--fix` setting, given bare (`tp`) or as its scenario field (`parallel.tp`). */
function spaceName(text: string): SpaceName {
  const names = Object.keys(SPACE_FIELDS) as SpaceName[];
  const found = names.find((n) => n === text || SPACE_FIELDS[n] === text);
  if (!found)
    throw new SpaceSyntaxError(
      `'${text}' is not a setting the plan searches; use one of ${names.join(', ')} (or its field, e.g. parallel.tp)`,
    );
  return found;
}

/** Reads `name=a,b,c` into the setting and its values (duplicates dropped, in the order given). */
export function parseSpaceEntry(text: string): { name: SpaceName; values: (number | string | boolean)[] } {
  const eq = text.indexOf('=');
  if (eq <= 0 || eq === text.length - 1)
    throw new SpaceSyntaxError(`'${text}' is not name=value[,value...] (e.g. tp=2,4,8 or recompute=none,selective)`);
  const name = spaceName(text.slice(0, eq).trim());
  const values = text
    .slice(eq + 1)
    .split(',')
    .map((v) => parseValue(name, v.trim()));
  return { name, values: [...new Set(values)] };
}

/** The space with `--space` entries replacing their defaults, then `--fix` entries (one value each) on top. */
export function narrowSpace(
  space: PlanSpace,
  spaceEntries: readonly string[],
  fixEntries: readonly string[],
): PlanSpace {
  const out: PlanSpace = { ...space };
  const put = (text: string, single: boolean) => {
    const { name, values } = parseSpaceEntry(text);
    if (single && values.length !== 1)
      throw new SpaceSyntaxError(`--fix ${text}: give one value (--space takes several)`);
    (out as unknown as Record<string, unknown>)[name] = values;
  };
  for (const e of spaceEntries) put(e, false);
  for (const e of fixEntries) put(e, true);
  return out;
}
