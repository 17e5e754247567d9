import { describe, expect, it } from 'vitest';
import { cpuClockFor } from '../../src/calibrate/backends.js';
import {
  calibrationPlan,
  collectiveId,
  copyId,
  gemmId,
  geometric,
  innerFor,
  rankCounts,
} from '../../src/calibrate/plan.js';
import type { BenchItem } from '../../src/calibrate/types.js';
import { validationCases } from '../../src/calibrate/validatePlan.js';
import { FIT_LAYERS, HELD_OUT_LAYERS, layerGemmShapes, layerOps } from '../../src/calibrate/workloads.js';
import { gemmMisaligned } from '../../src/sim/workload/kernelTime.js';
import { benchGemmOp } from '../../src/calibrate/predict.js';
import type { Dtype } from '../../src/sim/hardware/types.js';

/** The plan id a validation item would have if the calibration had measured it. */
function idOf(item: BenchItem): string | undefined {
  if (item.kind === 'gemm') return gemmId(item.dtype, item);
  if (item.kind === 'copy') return copyId(item.direction, item.pinned, item.bytes);
  if (item.kind === 'collective') return collectiveId(item.op, item.ranks, item.bytes);
  return undefined;
}

describe('calibration and validation plans', () => {
  for (const backend of ['cpu', 'cuda'] as const) {
    for (const quick of [true, false]) {
      it(
        `${backend}${quick ? ' --quick' : ''}: ids are unique and validation uses no size or shape ` +
          'the calibration measured',
        () => {
          const plan = calibrationPlan({ backend, quick, maxRanks: 8 });
          const ids = plan.map((p) => p.id);
          expect(new Set(ids).size).toBe(ids.length);
          const measured = new Set(ids);
          const cases = validationCases(backend, quick, 8);
          expect(cases.length).toBeGreaterThan(5);
          expect(cases.map((c) => idOf(c.item)).filter((id) => id !== undefined && measured.has(id))).toEqual([]);
          expect(new Set(cases.map((c) => c.kind))).toEqual(
            new Set(['gemm', 'chain', 'overlap', 'copy', 'collective']),
          );
        },
      );
    }
  }

  it('checks a misaligned GEMM on a GPU (an unpadded GPT-2 LM head), not on the CPU', () => {
    const gemms = (backend: 'cpu' | 'cuda') =>
      validationCases(backend, false, 8).flatMap((c) => (c.item.kind === 'gemm' ? [c.item] : []));
    // In the addon's layout (column-major, no transposes) m and k are leading dimensions, n is not.
    const misaligned = (g: { m: number; n: number; k: number; dtype: Dtype }) =>
      gemmMisaligned(benchGemmOp('g', g, g.dtype).gemm!, g.dtype);
    expect(
      gemms('cuda')
        .filter(misaligned)
        .map((g) => `${g.dtype} ${g.m}x${g.n}x${g.k}`),
    ).toEqual(['bf16 50257x4096x2048']);
    expect(gemms('cpu').filter(misaligned)).toEqual([]);
  });

  it('holds out whole layers: no held-out layer is a fitted one', () => {
    for (const backend of ['cpu', 'cuda'] as const) {
      const fitted = new Set(
        FIT_LAYERS[backend].flatMap((l) => layerGemmShapes(l, 'fp32').map((d) => `${d.m}x${d.n}x${d.k}`)),
      );
      for (const l of HELD_OUT_LAYERS[backend]) {
        const shapes = layerGemmShapes(l, 'fp32').map((d) => `${d.m}x${d.n}x${d.k}`);
        expect(shapes.filter((s) => fitted.has(s))).toEqual([]);
      }
    }
  });

  it('builds layer GEMMs as the simulator does: 2·tokens·in·out per forward GEMM, backward twice that', () => {
    const l = HELD_OUT_LAYERS.cuda[2]; // Mistral 7B: grouped-query attention and SwiGLU
    const { forward, backward } = layerOps(l, 'bf16');
    const f = forward.reduce((a, op) => a + op.flops, 0);
    const b = backward.reduce((a, op) => a + op.flops, 0);
    const h = l.hidden;
    expect(f).toBe(2 * l.tokens * (h * (h + 2 * l.kvHidden) + h * h + 3 * h * l.ffnHidden));
    expect(b).toBe(2 * f);
    expect(backward.filter((op) => op.gradParams).length).toBe(5);
  });

  it('sizes samples, collective groups and geometric sweeps', () => {
    expect(geometric(1, 16, 4)).toEqual([1, 4, 16]);
    expect(rankCounts(1, false)).toEqual([]);
    expect(rankCounts(6, false)).toEqual([2, 4, 6]);
    expect(rankCounts(8, true)).toEqual([8]);
    expect(innerFor(1e-6, 1e-3, 200)).toBe(200);
    expect(innerFor(1, 1e-3, 200)).toBe(1);
    expect(innerFor(1e-4, 1e-3, 200)).toBe(10);
  });

  it('plans the CPU backend without collectives when only one thread could take part', () => {
    expect(
      calibrationPlan({ backend: 'cpu', quick: true, maxRanks: 1 }).some((p) => p.item.kind === 'collective'),
    ).toBe(false);
    expect(validationCases('cpu', true, 1).some((c) => c.kind === 'collective')).toBe(false);
  });
});

describe('how the CPU backend times its work', () => {
  const rep = { warmup: 1, repeats: 3, inner: 1 };
  const program = {
    kind: 'program' as const,
    dtype: 'fp32' as const,
    gemms: [{ m: 8, n: 8, k: 8 }],
    copies: [{ bytes: 64, after: 0 }],
    direction: 'h2h' as const,
    run: 'both' as const,
    ...rep,
  };

  const gemm: BenchItem = { kind: 'gemm', dtype: 'fp32', m: 1, n: 1, k: 1, ...rep };
  const copy: BenchItem = { kind: 'copy', direction: 'h2h', pinned: true, bytes: 64, ...rep };
  const collective: BenchItem = { kind: 'collective', op: 'all_reduce', ranks: 2, bytes: 64, ...rep };

  it('uses CPU clocks of the working threads with one compute thread, so other processes do not count', () => {
    expect(cpuClockFor(gemm, 1, 'auto')).toBe('thread');
    expect(cpuClockFor(copy, 1, 'auto')).toBe('thread');
    expect(cpuClockFor(collective, 1, 'auto')).toBe('thread');
    expect(cpuClockFor(program, 1, 'auto')).toBe('thread');
  });

  it('falls back to the wall clock for GEMMs on several threads, when asked, or for the whole run', () => {
    expect(cpuClockFor(gemm, 4, 'auto')).toBe('wall');
    expect(cpuClockFor(program, 4, 'auto')).toBe('wall');
    expect(cpuClockFor({ ...program, clock: 'wall' }, 1, 'auto')).toBe('wall');
    expect(cpuClockFor(copy, 1, 'wall')).toBe('wall');
  });
});
