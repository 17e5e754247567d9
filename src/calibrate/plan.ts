import type { Dtype } from '../sim/hardware/types.js';
import { FIT_LAYERS, gradientBytes, layerGemmShapes, layerOps, opDims, type LayerShape } from './workloads.js';
import {
  MEASURED_COLLECTIVES,
  type BackendKind,
  type BenchItem,
  type CopyDirection,
  type GemmDims,
  type PlannedItem,
} from './types.js';

/**
 * What `calibrate` measures, per backend, in full or `--quick` form. Every item has a stable id, the key by
 * which `--resume` skips what the log already holds. Validation (validatePlan.ts) uses other sizes and shapes.
 */

export interface PlanOptions {
  backend: BackendKind;
  quick: boolean;
  /** GPUs (cuda) or threads (cpu) collectives can span; below 2 none are measured. */
  maxRanks: number;
}

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/** min, min·factor, … up to max. */
export function geometric(min: number, max: number, factor: number): number[] {
  const out: number[] = [];
  for (let v = min; v <= max; v *= factor) out.push(v);
  return out;
}

/** Group sizes for collectives: powers of two up to `max`, and `max` itself. */
export function rankCounts(max: number, quick: boolean): number[] {
  if (max < 2) return [];
  if (quick) return [max];
  return [...new Set([...geometric(2, max, 2), max])];
}

/** Back-to-back operations per sample so that one sample lasts about `targetS` when one takes `estimateS`. */
export function innerFor(estimateS: number, targetS: number, cap: number): number {
  return Math.max(1, Math.min(cap, Math.ceil(targetS / Math.max(estimateS, 1e-9))));
}

/** A rough throughput guess per dtype (FLOP/s), only to size `inner`; wrong guesses just change sample length. */
const GUESS_FLOPS: Record<BackendKind, Partial<Record<Dtype, number>>> = {
  cpu: { fp32: 30e9 },
  cuda: { fp32: 40e12, tf32: 300e12, fp16: 600e12, bf16: 600e12 },
};

export function gemmId(dtype: Dtype, d: GemmDims): string {
  return `gemm/${dtype}/${d.m}x${d.n}x${d.k}`;
}

export function copyId(direction: CopyDirection, pinned: boolean, bytes: number): string {
  const memory = direction === 'h2d' || direction === 'd2h' ? (pinned ? '-pinned' : '-pageable') : '';
  return `copy/${direction}${memory}/${bytes}`;
}

export function collectiveId(op: string, ranks: number, bytes: number): string {
  return `collective/${op}/${ranks}/${bytes}`;
}

/** The op, group size and bytes of a `collectiveId`, or undefined for any other measurement id. */
export function parseCollectiveId(id: string): { op: string; ranks: number; bytes: number } | undefined {
  const [kind, op, ranks, bytes] = id.split('/');
  return kind === 'collective' ? { op, ranks: Number(ranks), bytes: Number(bytes) } : undefined;
}

function gemmItems(
  backend: BackendKind,
  dtype: Dtype,
  shapes: GemmDims[],
  repeats: number,
  group: string,
): PlannedItem[] {
  const guess = GUESS_FLOPS[backend][dtype] ?? 1e12;
  return shapes.map((d) => {
    const est = (2 * d.m * d.n * d.k) / guess;
    const item: BenchItem = {
      kind: 'gemm',
      dtype,
      ...d,
      warmup: backend === 'cuda' ? 2 : 1,
      repeats,
      inner: innerFor(est, backend === 'cuda' ? 1e-3 : 2e-3, 200),
    };
    return { id: gemmId(dtype, d), group, item };
  });
}

function grid(dims: number[]): GemmDims[] {
  const out: GemmDims[] = [];
  for (const m of dims) for (const n of dims) for (const k of dims) out.push({ m, n, k });
  return out;
}

function withLayers(shapes: GemmDims[], layers: LayerShape[], dtype: Dtype): GemmDims[] {
  const all = new Map(shapes.map((d) => [`${d.m}x${d.n}x${d.k}`, d]));
  for (const l of layers) for (const d of layerGemmShapes(l, dtype)) all.set(`${d.m}x${d.n}x${d.k}`, d);
  return [...all.values()];
}

/** The backward GEMMs of a layer with a gradient copy after each wgrad: a DDP/ZeRO-Offload step in miniature. */
export function overlapProgram(
  layer: LayerShape,
  dtype: Dtype,
  direction: CopyDirection,
  run: 'both' | 'compute' | 'copy',
  reps: { warmup: number; repeats: number },
): BenchItem {
  const { backward } = layerOps(layer, dtype);
  const copies = backward.flatMap((op, i) => (op.gradParams ? [{ bytes: gradientBytes(op, dtype), after: i }] : []));
  return { kind: 'program', dtype, gemms: backward.map(opDims), copies, direction, run, ...reps, inner: 1 };
}

/**
 * Bytes a CPU copy or collective (per rank) cycles its buffers through, so that consecutive operations do not
 * find their data still in the caches: a GPU's buffers live in HBM, and the α–β model assumes one memory tier.
 */
export const CPU_COPY_FOOTPRINT = 256 * MiB;
export const CPU_COLLECTIVE_FOOTPRINT = 64 * MiB;

function cpuPlan(o: PlanOptions): PlannedItem[] {
  const q = o.quick;
  const items: PlannedItem[] = [
    { id: 'launch', group: 'launch', item: { kind: 'launch', warmup: 200, repeats: q ? 5 : 9, inner: 2000 } },
  ];
  for (const bytes of q ? geometric(256 * KiB, 16 * MiB, 4) : geometric(64 * KiB, 64 * MiB, 2)) {
    const item: BenchItem = {
      kind: 'copy',
      direction: 'h2h',
      pinned: true,
      bytes,
      footprintBytes: CPU_COPY_FOOTPRINT,
      warmup: 2,
      repeats: q ? 5 : 7,
      inner: innerFor(bytes / 5e9, 5e-3, 1000),
    };
    items.push({ id: copyId('h2h', true, bytes), group: 'copy h2h', item });
  }
  const dims = q ? [64, 256, 1024] : [64, 128, 256, 512, 1024, 1536];
  items.push(...gemmItems('cpu', 'fp32', withLayers(grid(dims), FIT_LAYERS.cpu, 'fp32'), q ? 3 : 5, 'gemm fp32'));
  for (const ranks of rankCounts(o.maxRanks, q)) {
    for (const op of MEASURED_COLLECTIVES) {
      for (const bytes of q ? geometric(64 * KiB, 16 * MiB, 4) : geometric(16 * KiB, 64 * MiB, 2)) {
        const item: BenchItem = {
          kind: 'collective',
          op,
          ranks,
          bytes,
          footprintBytes: CPU_COLLECTIVE_FOOTPRINT,
          warmup: 2,
          repeats: q ? 5 : 7,
          inner: innerFor(bytes / 3e9, 5e-3, 256),
        };
        items.push({ id: collectiveId(op, ranks, bytes), group: `${op} ×${ranks}`, item });
      }
    }
  }
  for (const run of ['compute', 'copy', 'both'] as const) {
    items.push({
      id: `overlap/${run}`,
      group: 'overlap',
      item: overlapProgram(FIT_LAYERS.cpu[0], 'fp32', 'h2h', run, { warmup: 1, repeats: q ? 3 : 5 }),
    });
  }
  return items;
}

function cudaPlan(o: PlanOptions): PlannedItem[] {
  const q = o.quick;
  const items: PlannedItem[] = [
    { id: 'launch', group: 'launch', item: { kind: 'launch', warmup: 100, repeats: q ? 5 : 9, inner: 1000 } },
  ];
  const sizes = q ? geometric(1 * MiB, 256 * MiB, 4) : geometric(64 * KiB, 1 * GiB, 4);
  for (const bytes of sizes) {
    items.push({
      id: copyId('d2d', true, bytes),
      group: 'copy d2d',
      item: {
        kind: 'copy',
        direction: 'd2d',
        pinned: true,
        bytes,
        footprintBytes: 2 * GiB,
        warmup: 3,
        repeats: 5,
        inner: innerFor(bytes / 2e12, 2e-3, 1000),
      },
    });
    for (const direction of ['h2d', 'd2h'] as const) {
      for (const pinned of [true, false]) {
        const item: BenchItem = {
          kind: 'copy',
          direction,
          pinned,
          bytes,
          warmup: 2,
          repeats: 5,
          inner: innerFor(bytes / 25e9, 2e-3, 1000),
        };
        items.push({
          id: copyId(direction, pinned, bytes),
          group: `copy ${direction} ${pinned ? 'pinned' : 'pageable'}`,
          item,
        });
      }
    }
  }
  const dims = q ? [512, 2048, 8192] : [128, 256, 512, 1024, 2048, 4096, 8192];
  for (const dtype of ['bf16', 'fp16', 'tf32', 'fp32'] as const) {
    items.push(...gemmItems('cuda', dtype, withLayers(grid(dims), FIT_LAYERS.cuda, dtype), 5, `gemm ${dtype}`));
  }
  for (const ranks of rankCounts(o.maxRanks, q)) {
    for (const op of MEASURED_COLLECTIVES) {
      for (const bytes of q ? geometric(64 * KiB, 1 * GiB, 4) : geometric(8 * KiB, 2 * GiB, 4)) {
        const item: BenchItem = {
          kind: 'collective',
          op,
          ranks,
          bytes,
          warmup: 3,
          repeats: 5,
          inner: innerFor(20e-6 + bytes / 100e9, 2e-3, 100),
        };
        items.push({ id: collectiveId(op, ranks, bytes), group: `${op} ×${ranks}`, item });
      }
    }
  }
  for (const run of ['compute', 'copy', 'both'] as const) {
    items.push({
      id: `overlap/${run}`,
      group: 'overlap',
      item: overlapProgram(FIT_LAYERS.cuda[1], 'bf16', 'd2h', run, { warmup: 2, repeats: 5 }),
    });
  }
  return items;
}

/** The measurements of a calibration, in the order they run. */
export function calibrationPlan(o: PlanOptions): PlannedItem[] {
  return o.backend === 'cpu' ? cpuPlan(o) : cudaPlan(o);
}
