import { ScenarioError } from '../errors.js';

/**
 * How ranks are numbered over the (tp, dp, pp) grid; the first letter varies fastest. Context-parallel ranks
 * always come right after tp, as in Megatron's orders (tp-cp-dp-pp, tp-cp-pp-dp).
 */
export type Placement = 'tp-dp-pp' | 'tp-pp-dp';

/**
 * The parallel grid: which GPU holds which tensor / data / pipeline index, and the groups. The d axis runs over
 * the dp × cp ranks of a stage that hold the same weights (and reduce their gradients together): d = replica·cp + c,
 * where c is the rank's place in its context-parallel group. Without context parallelism d is the replica.
 */
export class ParallelLayout {
  readonly world: number;
  /** Size of the d axis: data-parallel replicas × context-parallel ranks. */
  readonly dp: number;
  private readonly tpGroups = new Map<number, number[]>();
  private readonly dpGroups = new Map<number, number[]>();
  private readonly stageGroups = new Map<number, number[]>();
  private readonly cpGroups = new Map<number, number[]>();
  private readonly pairs = new Map<number, number[]>();
  private readonly expertGroups = new Map<string, number[]>();

  constructor(
    readonly tp: number,
    /** Data-parallel replicas. */
    readonly replicas: number,
    readonly pp: number,
    readonly placement: Placement = 'tp-dp-pp',
    /** Context-parallel ranks per replica. */
    readonly cp = 1,
  ) {
    this.dp = replicas * cp;
    this.world = tp * this.dp * pp;
  }

  /**
   * Global GPU rank of grid point (t, d, p). Megatron's default order: TP fastest (so a TP group sits
   * inside a node when it fits), then CP, then DP, then PP.
   */
  rank(t: number, d: number, p: number): number {
    if (this.placement === 'tp-dp-pp') return (p * this.dp + d) * this.tp + t;
    const c = d % this.cp;
    const replica = (d - c) / this.cp;
    return ((replica * this.pp + p) * this.cp + c) * this.tp + t;
  }

  coords(rank: number): { t: number; d: number; p: number } {
    const t = rank % this.tp;
    const rest = Math.floor(rank / this.tp);
    if (this.placement === 'tp-dp-pp') return { t, d: rest % this.dp, p: Math.floor(rest / this.dp) };
    const c = rest % this.cp;
    const outer = Math.floor(rest / this.cp);
    return { t, p: outer % this.pp, d: Math.floor(outer / this.pp) * this.cp + c };
  }

  /** The context-parallel group of grid point (t, d, p), in ring order; the same array every time. */
  cpGroup(t: number, d: number, p: number): readonly number[] {
    const base = d - (d % this.cp);
    const key = (p * this.dp + base) * this.tp + t;
    let g = this.cpGroups.get(key);
    if (!g) this.cpGroups.set(key, (g = Array.from({ length: this.cp }, (_, c) => this.rank(t, base + c, p))));
    return g;
  }

  /** The rank that (t, d, p) sends its keys and values to in the context-parallel ring. */
  cpNext(t: number, d: number, p: number): number {
    return this.cpGroup(t, d, p)[((d % this.cp) + 1) % this.cp];
  }

  /** The TP group of (d, p), in TP order; the same array every time (cheaper for the program to intern). */
  tpGroup(d: number, p: number): readonly number[] {
    const key = p * this.dp + d;
    let g = this.tpGroups.get(key);
    if (!g) this.tpGroups.set(key, (g = Array.from({ length: this.tp }, (_, t) => this.rank(t, d, p))));
    return g;
  }

  /**
   * The rank at place `local` of stage p's expert grid: Megatron-Core folds the experts over the stage's tp × cp × dp
   * ranks in their order, tp fastest, local = t + tp·d, and orders its expert grid tp-ep-dp over them (etp fastest).
   */
  expertRank(local: number, p: number): number {
    return this.rank(local % this.tp, Math.floor(local / this.tp), p);
  }

  /**
   * The expert-parallel group of grid point (t, d, p) under expert tensor parallelism etp: the ep places of the expert
   * grid, etp apart, that share its etp index and its block of etp × ep. With etp = tp it is ep consecutive points of
   * the d axis with the same t; the same array every time.
   */
  epGroup(t: number, d: number, p: number, ep: number, etp = this.tp): readonly number[] {
    const local = t + this.tp * d;
    const block = local - (local % (etp * ep));
    const first = block + (local % etp);
    return this.expertGroup(`ep/${p}/${first}/${etp}/${ep}`, ep, (j) => this.expertRank(first + j * etp, p));
  }

  /** The expert tensor-parallel group of (t, d, p): the etp consecutive places of the expert grid around it. */
  etpGroup(t: number, d: number, p: number, etp: number): readonly number[] {
    const local = t + this.tp * d;
    const first = local - (local % etp);
    return this.expertGroup(`etp/${p}/${first}/${etp}`, etp, (j) => this.expertRank(first + j, p));
  }

  /**
   * The expert-data-parallel group at place `offset` (< etp × ep) of stage p's expert grid: the places offset +
   * j·etp·ep, which hold the same expert shards and reduce their gradients together.
   */
  edpGroup(offset: number, p: number, etp: number, ep: number): readonly number[] {
    const size = (this.tp * this.dp) / (etp * ep);
    return this.expertGroup(`edp/${p}/${offset}/${etp}/${ep}`, size, (j) => this.expertRank(offset + j * etp * ep, p));
  }

  private expertGroup(key: string, size: number, rankOf: (j: number) => number): readonly number[] {
    let g = this.expertGroups.get(key);
    if (!g) this.expertGroups.set(key, (g = Array.from({ length: size }, (_, j) => rankOf(j))));
    return g;
  }

  /** The pair [a, b] as one array per pair, the same every time (for point-to-point transfers). */
  pair(a: number, b: number): readonly number[] {
    const key = a * this.world + b;
    let g = this.pairs.get(key);
    if (!g) this.pairs.set(key, (g = [a, b]));
    return g;
  }

  /** The DP group of (t, p), in DP order; the same array every time. */
  dpGroup(t: number, p: number): readonly number[] {
    const key = p * this.tp + t;
    let g = this.dpGroups.get(key);
    if (!g) this.dpGroups.set(key, (g = Array.from({ length: this.dp }, (_, d) => this.rank(t, d, p))));
    return g;
  }

  /** Every rank of pipeline stage p (all TP ranks of all replicas), in rank order; the same array every time. */
  stageGroup(p: number): readonly number[] {
    let g = this.stageGroups.get(p);
    if (!g) {
      g = [];
      for (let d = 0; d < this.dp; d++) for (let t = 0; t < this.tp; t++) g.push(this.rank(t, d, p));
      g.sort((a, b) => a - b);
      this.stageGroups.set(p, g);
    }
    return g;
  }
}

/**
 * Whether the pipeline split counts the embedding and the loss as one layer each (Megatron's
 * `--account-for-embedding-in-pipeline-split`, `--account-for-loss-in-pipeline-split`): the first model chunk of
 * the first stage then holds one layer fewer (with one layer per chunk, the embedding alone), the last model chunk of
 * the last stage likewise. Llama 3 405B's interleaved pipeline ran so: one transformer layer fewer on the first and the
 * last stage, its first chunk holding the embedding alone and its last the output layer and loss alone (Llama Team
 * 2024, "The Llama 3 Herd of Models", §3.3.2).
 */
export interface SplitSlots {
  embedding?: boolean;
  loss?: boolean;
}

/** What a pipeline split is given: stages, model chunks per stage, and either per-stage counts or slots. */
export interface SplitSpec {
  pp: number;
  virtualStages: number;
  layersPerStage?: readonly number[];
  accountForEmbeddingInSplit?: boolean;
  accountForLossInSplit?: boolean;
}

/**
 * What is wrong with `layersPerStage` as a split of `layers` layers over `pp` stages of `v` model chunks each,
 * if anything: it needs one count per stage, adding up to the layers, and at least one layer per chunk.
 */
export function layersPerStageProblem(
  layers: number,
  pp: number,
  v: number,
  layersPerStage: readonly number[],
): string | undefined {
  if (layersPerStage.length !== pp) return `needs one count per pipeline stage (${pp}), got ${layersPerStage.length}`;
  const sum = layersPerStage.reduce((a, b) => a + b, 0);
  if (sum !== layers) return `adds up to ${sum}, but the model has ${layers} layers`;
  const short = layersPerStage.findIndex((n) => n < v);
  if (short >= 0)
    return (
      `stage ${short} has ${layersPerStage[short]} layers, fewer than its ${v} model chunks (virtualStages); ` +
      'each chunk needs at least one'
    );
  return undefined;
}

/** The layers plus the slots the split counts (the embedding, the loss), as Megatron adds them before dividing. */
function unitsOf(layers: number, slots: SplitSlots): number {
  return layers + (slots.embedding ? 1 : 0) + (slots.loss ? 1 : 0);
}

/**
 * What is wrong with an even split of `layers` layers (and the slots counted) over pp × v model chunks, if anything.
 */
export function evenSplitProblem(layers: number, pp: number, v: number, slots: SplitSlots = {}): string | undefined {
  const units = unitsOf(layers, slots);
  if (units % (pp * v) === 0) return undefined;
  const slotNames = [slots.embedding ? 'embedding' : '', slots.loss ? 'loss' : ''].filter(Boolean).join(' and ');
  const counted =
    units === layers ? `${layers} layers` : `${layers} layers + ${units - layers} (${slotNames} counted as layers)`;
  return `${counted} do not split evenly over pp × virtualStages = ${pp} × ${v} = ${pp * v} model chunks`;
}

/**
 * Layers per virtual stage of an even split, the first chunk giving up a layer to the embedding, the last to the loss.
 */
function evenCounts(layers: number, pp: number, v: number, slots: SplitSlots): number[] {
  const virtual = pp * v;
  const counts = new Array<number>(virtual).fill(unitsOf(layers, slots) / virtual);
  if (slots.embedding) counts[0] -= 1;
  if (slots.loss) counts[virtual - 1] -= 1;
  return counts;
}

/** The pipeline split of `layers` layers a parallel setup asks for (see `splitLayers`). */
export function splitOf(layers: number, spec: SplitSpec): number[][] {
  return splitLayers(layers, spec.pp, spec.virtualStages, spec.layersPerStage, {
    embedding: spec.accountForEmbeddingInSplit,
    loss: spec.accountForLossInSplit,
  });
}

/**
 * Transformer layers of each virtual pipeline stage (pp × v of them; chunk c of stage s is virtual
 * stage c·pp + s, as Megatron interleaves). Layers are split evenly unless `layersPerStage` is given:
 * one count per stage; with v > 1 chunks, each stage's layers are dealt over its v chunks as evenly as
 * they go, earlier chunks taking the remainder. An even split may count the embedding and the loss as a
 * layer each (`SplitSlots`); a chunk may then hold no layer.
 */
export function splitLayers(
  layers: number,
  pp: number,
  v: number,
  layersPerStage?: readonly number[],
  slots: SplitSlots = {},
): number[][] {
  const virtual = pp * v;
  let counts: number[];
  if (layersPerStage) {
    const problem = layersPerStageProblem(layers, pp, v, layersPerStage);
    if (problem) throw new ScenarioError('parallel.layersPerStage', problem);
    counts = new Array<number>(virtual);
    layersPerStage.forEach((n, stage) => {
      for (let c = 0; c < v; c++) counts[c * pp + stage] = Math.floor(n / v) + (c < n % v ? 1 : 0);
    });
  } else {
    const problem = evenSplitProblem(layers, pp, v, slots);
    if (problem)
      throw new ScenarioError(
        v > 1 ? 'parallel.virtualStages' : 'parallel.pp',
        `${problem}; give parallel.layersPerStage or change pp`,
      );
    counts = evenCounts(layers, pp, v, slots);
  }
  const out: number[][] = [];
  let next = 0;
  for (const c of counts) {
    out.push(Array.from({ length: c }, (_, i) => next + i));
    next += c;
  }
  return out;
}
