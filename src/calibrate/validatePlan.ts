import type { Dtype } from '../sim/hardware/types.js';
import { CPU_COLLECTIVE_FOOTPRINT, CPU_COPY_FOOTPRINT, innerFor, overlapProgram } from './plan.js';
import { MEASURED_COLLECTIVES, type BackendKind, type BenchItem, type GemmDims } from './types.js';
import { HELD_OUT_LAYERS, layerOps, opDims, type LayerShape } from './workloads.js';

/**
 * Held-out workloads for `validate`: GEMM shapes, copy and collective sizes the calibration did not measure,
 * forward + backward GEMM chains of real layers it did not fit on, and a backward pass whose gradient copies
 * overlap compute on another stream (cuda) or thread (cpu). Each is measured for real and simulated with the
 * profile.
 */

export type CaseKind = 'gemm' | 'chain' | 'overlap' | 'copy' | 'collective';

export interface ValidationCase {
  name: string;
  kind: CaseKind;
  item: BenchItem;
}

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * Off-grid GEMM shapes: every one has at least one dimension the calibration grid does not use. The GPU list ends
 * with a language-model head over GPT-2's unpadded vocabulary (50257, off the tensor-core alignment) as m, a
 * leading dimension of the addon's column-major GEMM (its logits as PyTorch lays them out, tokens × vocabulary
 * row-major), which checks the misaligned-GEMM slowdown (kernelTime.ts `misalignedGemmSlowdown`) on the machine.
 */
export const HELD_OUT_GEMMS: Record<BackendKind, { dtype: Dtype; shapes: GemmDims[] }[]> = {
  cpu: [
    {
      dtype: 'fp32',
      shapes: [
        { m: 200, n: 200, k: 200 },
        { m: 384, n: 384, k: 384 },
        { m: 80, n: 300, k: 500 },
        { m: 640, n: 448, k: 192 },
        { m: 768, n: 96, k: 1400 },
        { m: 160, n: 1280, k: 320 },
        { m: 1200, n: 700, k: 300 },
        { m: 96, n: 2000, k: 200 },
      ],
    },
  ],
  cuda: [
    {
      dtype: 'bf16',
      shapes: [
        { m: 6144, n: 6144, k: 6144 },
        { m: 3072, n: 12288, k: 1536 },
        { m: 768, n: 768, k: 768 },
        { m: 10000, n: 1000, k: 3000 },
        { m: 50257, n: 4096, k: 2048 },
      ],
    },
    {
      dtype: 'fp16',
      shapes: [
        { m: 6144, n: 6144, k: 6144 },
        { m: 1536, n: 3072, k: 12288 },
      ],
    },
    {
      dtype: 'tf32',
      shapes: [
        { m: 6144, n: 6144, k: 6144 },
        { m: 3000, n: 3000, k: 1500 },
      ],
    },
    {
      dtype: 'fp32',
      shapes: [
        { m: 3072, n: 3072, k: 3072 },
        { m: 1500, n: 6000, k: 700 },
      ],
    },
  ],
};

function chainItem(layer: LayerShape, dtype: Dtype, repeats: number): BenchItem {
  const { forward, backward } = layerOps(layer, dtype);
  return {
    kind: 'program',
    dtype,
    gemms: [...forward, ...backward].map(opDims),
    copies: [],
    direction: 'h2h',
    run: 'compute',
    warmup: 1,
    repeats,
    inner: 1,
  };
}

export function validationCases(backend: BackendKind, quick: boolean, maxRanks: number): ValidationCase[] {
  const cases: ValidationCase[] = [];
  const repeats = quick ? 3 : 5;
  const gpu = backend === 'cuda';
  for (const { dtype, shapes } of HELD_OUT_GEMMS[backend]) {
    for (const s of quick ? shapes.slice(0, gpu ? 2 : 4) : shapes) {
      const est = (2 * s.m * s.n * s.k) / (gpu ? 3e14 : 3e10);
      cases.push({
        name: `gemm ${dtype} ${s.m}×${s.n}×${s.k}`,
        kind: 'gemm',
        item: { kind: 'gemm', dtype, ...s, warmup: gpu ? 2 : 1, repeats, inner: innerFor(est, gpu ? 1e-3 : 2e-3, 200) },
      });
    }
  }
  const dtype: Dtype = gpu ? 'bf16' : 'fp32';
  const layers = HELD_OUT_LAYERS[backend];
  for (const layer of quick ? layers.slice(0, 1) : layers) {
    cases.push({
      name: `layer chain ${layer.name} fwd+bwd (${layer.tokens} tokens, ${dtype})`,
      kind: 'chain',
      item: chainItem(layer, dtype, repeats),
    });
  }
  const overlapLayer = gpu ? layers[1] : layers[0];
  const overlap = overlapProgram(overlapLayer, dtype, gpu ? 'd2h' : 'h2h', 'both', { warmup: 1, repeats });
  cases.push({
    name: `overlap ${overlapLayer.name} bwd + gradient copies (${gpu ? 'd2h' : 'h2h'})`,
    kind: 'overlap',
    item: overlap,
  });
  // On the CPU the case above is timed as the critical path of the threads' CPU times; this one is the wall
  // clock, which on a shared machine also measures how often the OS runs both threads at once.
  if (!gpu)
    cases.push({
      name: `overlap ${overlapLayer.name} bwd + gradient copies (h2h, wall clock)`,
      kind: 'overlap',
      item: { ...overlap, clock: 'wall' },
    });
  const copySizes = gpu ? [3 * MiB, 48 * MiB, 768 * MiB] : quick ? [3 * MiB, 12 * MiB] : [384 * KiB, 3 * MiB, 12 * MiB];
  const directions = gpu ? (['d2d', 'h2d', 'd2h'] as const) : (['h2h'] as const);
  for (const direction of directions) {
    for (const bytes of copySizes) {
      const item: BenchItem = gpu
        ? {
            kind: 'copy',
            direction,
            pinned: true,
            bytes,
            footprintBytes: direction === 'd2d' ? 2 * 1024 * MiB : 0,
            warmup: 2,
            repeats,
            inner: innerFor(bytes / 25e9, 2e-3, 1000),
          }
        : {
            kind: 'copy',
            direction,
            pinned: true,
            bytes,
            footprintBytes: CPU_COPY_FOOTPRINT,
            warmup: 2,
            repeats,
            inner: innerFor(bytes / 5e9, 5e-3, 1000),
          };
      cases.push({
        name: `copy ${direction}${gpu && direction !== 'd2d' ? ' pinned' : ''} ${fmtBytes(bytes)}`,
        kind: 'copy',
        item,
      });
    }
  }
  if (maxRanks >= 2) {
    const sizes = gpu ? [96 * KiB, 6 * MiB, 384 * MiB] : quick ? [768 * KiB, 6 * MiB] : [96 * KiB, 768 * KiB, 6 * MiB];
    for (const op of MEASURED_COLLECTIVES) {
      for (const bytes of sizes) {
        const inner = gpu ? innerFor(20e-6 + bytes / 100e9, 2e-3, 100) : innerFor(bytes / 3e9, 5e-3, 256);
        cases.push({
          name: `${op} ×${maxRanks} ${fmtBytes(bytes)}`,
          kind: 'collective',
          item: {
            kind: 'collective',
            op,
            ranks: maxRanks,
            bytes,
            ...(gpu ? {} : { footprintBytes: CPU_COLLECTIVE_FOOTPRINT }),
            warmup: 2,
            repeats: quick ? 5 : 7,
            inner,
          },
        });
      }
    }
  }
  return cases;
}

function fmtBytes(b: number): string {
  return b >= MiB ? `${b / MiB} MiB` : `${b / KiB} KiB`;
}
