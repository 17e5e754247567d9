import type { StepParts } from './decompose.js';
import { microBatchesOf, type FittedFamily } from './families.js';
import type { VtrainRow } from './vtrain.js';

/**
 * What the orders the measured per-layer times break cost a model whose per-layer time behaves as work does: the least
 * MAPE over the fitted rows when each row keeps its measured per-micro-batch and per-step parts and takes its
 * per-layer part from a per-layer time a(h, tp, mb) that is
 *   - non-decreasing in the micro-batch size (a layer over more samples takes no less time), and
 *   - sub-additive (a layer over twice the samples takes at most twice the time),
 * chosen freely otherwise. The measured per-layer times break these orders in places (at h1024 tp 8 a layer over
 * four samples is faster than over one); this floor says how much of the error that alone forces on every such model.
 *
 * The other parts stay at their least-squares fits (with a pipeline the per-step part holds the fill, which would grow
 * with a), so this is a floor for changes of the per-layer times alone, not for every model. Found exactly on a
 * geometric grid of per-layer times (steps of `GRID_STEP`, so the exact least lies a little below) by dynamic
 * programming over the micro-batch sizes of each (hidden, tp): the cost of one per-layer time is a sum of absolute
 * relative errors over its rows, and the two orders only link neighbouring sizes.
 */
export const GRID_STEP = 1.002;

export interface LayerTimeFloor {
  /** Rows of the fitted single-node families (the others are left out). */
  rows: number;
  /** The least MAPE over those rows, %. */
  floorPct: number;
  /** (hidden, tp) cells, each with the per-layer time chosen for each micro-batch size (ms, a × pp). */
  cells: { hidden: number; tp: number; perLayerMs: Record<number, number> }[];
}

interface FittedRow {
  row: VtrainRow;
  measured: StepParts;
}

/** Sum of |prediction − measured| / measured over `rows` when their per-layer time (a × pp) is `a`. */
function costOf(rows: readonly FittedRow[], a: number): number {
  let sum = 0;
  for (const { row, measured } of rows) {
    const n = microBatchesOf(row);
    const t = measured.perMicroBatchMs * n + measured.perStepMs(row.layers) + (a / row.pp) * row.layers * n;
    sum += Math.abs(t - row.measuredMs) / row.measuredMs;
  }
  return sum;
}

/** The least-cost per-layer times of one (hidden, tp), in the order of `sizes` (ascending), and their cost. */
function bestChain(
  sizes: readonly number[],
  rowsBySize: ReadonlyMap<number, FittedRow[]>,
  grid: readonly number[],
): { cost: number; picks: number[] } {
  const costs = sizes.map((mb) => grid.map((a) => costOf(rowsBySize.get(mb) ?? [], a)));
  // best[i][g]: least cost of sizes i.. when size i takes grid[g]; next[i][g]: the grid index size i + 1 takes then.
  const best: number[][] = [costs[sizes.length - 1]];
  const next: number[][] = [];
  for (let i = sizes.length - 2; i >= 0; i--) {
    const ratio = sizes[i + 1] / sizes[i];
    const after = best[0];
    const row: number[] = [];
    const pick: number[] = [];
    for (let g = 0; g < grid.length; g++) {
      let min = Infinity;
      let at = g;
      for (let h = g; h < grid.length && grid[h] <= ratio * grid[g] * (1 + 1e-12); h++) {
        if (after[h] < min) {
          min = after[h];
          at = h;
        }
      }
      row.push(costs[i][g] + min);
      pick.push(at);
    }
    best.unshift(row);
    next.unshift(pick);
  }
  let g = 0;
  for (let k = 1; k < grid.length; k++) if (best[0][k] < best[0][g]) g = k;
  const cost = best[0][g];
  const picks = [g];
  for (let i = 0; i < sizes.length - 1; i++) picks.push(next[i][picks[i]]);
  return { cost, picks };
}

/** The floor over the single-node families (`fittedFamilies`; only their measured times are used). */
export function layerTimeFloor(families: readonly FittedFamily[]): LayerTimeFloor {
  const cells = new Map<string, Map<number, FittedRow[]>>();
  let lo = Infinity;
  let hi = 0;
  for (const { rows: os, measured } of families) {
    if (!measured) continue;
    const r = os[0].row;
    const a = measured.perLayerMicroBatchMs * r.pp;
    lo = Math.min(lo, a);
    hi = Math.max(hi, a);
    const key = `${r.hidden}/${r.tp}`;
    const bySize = cells.get(key) ?? new Map<number, FittedRow[]>();
    bySize.set(r.microBatch, [...(bySize.get(r.microBatch) ?? []), ...os.map((o) => ({ row: o.row, measured }))]);
    cells.set(key, bySize);
  }
  if (cells.size === 0) return { rows: 0, floorPct: 0, cells: [] };
  const grid: number[] = [];
  for (let a = Math.max(lo, 1e-6) / 2; a <= hi * 2; a *= GRID_STEP) grid.push(a);
  let cost = 0;
  let rows = 0;
  const out: LayerTimeFloor['cells'] = [];
  for (const [key, bySize] of cells) {
    const sizes = [...bySize.keys()].sort((x, y) => x - y);
    const chain = bestChain(sizes, bySize, grid);
    cost += chain.cost;
    rows += sizes.reduce((s, mb) => s + (bySize.get(mb)?.length ?? 0), 0);
    const [hidden, tp] = key.split('/').map(Number);
    out.push({ hidden, tp, perLayerMs: Object.fromEntries(sizes.map((mb, i) => [mb, grid[chain.picks[i]]])) });
  }
  return { rows, floorPct: (100 * cost) / rows, cells: out };
}
