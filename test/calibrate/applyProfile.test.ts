import { describe, expect, it } from 'vitest';
import {
  linkFit,
  matchGpuPreset,
  measuredGemmOf,
  profileCluster,
  profileGpu,
} from '../../src/calibrate/applyProfile.js';
import { alphaBetaSeconds } from '../../src/calibrate/fitAlphaBeta.js';
import { predictSeconds } from '../../src/calibrate/predict.js';
import { H200_SXM_141GB } from '../../src/sim/hardware/gpus.js';
import { DGX_A100_80GB, HGX_H200 } from '../../src/sim/hardware/nodes.js';
import { IB_NDR } from '../../src/sim/hardware/networks.js';
import { gemmCorrection, gemmEfficiency, measuredGemmNs, opTimeNs } from '../../src/sim/workload/kernelTime.js';
import { gemmOp } from '../../src/sim/workload/ops.js';
import { syntheticProfile, TRUE_GEMM } from './fixtures.js';

describe('the calibrated GEMM model in the kernel-time model', () => {
  it('changes nothing for a GPU without measured GEMMs', () => {
    const op = gemmOp('x', 4096, 4096, 4096, 1, 'bf16');
    const peakPerNs = H200_SXM_141GB.peakTflops.bf16! * 1e3;
    const expected = Math.round(
      op.flops / (peakPerNs * gemmEfficiency(4096, 4096, 4096, H200_SXM_141GB, 'bf16')) + H200_SXM_141GB.kernelLaunchNs,
    );
    expect(opTimeNs(op, H200_SXM_141GB, 'bf16')).toBe(expected);
  });

  it('uses the measured model plus the launch overhead where the dtype was measured, and only there', () => {
    const gpu = {
      ...H200_SXM_141GB,
      kernelLaunchNs: 2000,
      measuredGemm: {
        bf16: { tileM: 128, tileN: 128, units: 132, splitKMinK: 256, ceilingTflops: 700, smallKHalf: 40 },
      },
    };
    const op = gemmOp('x', 8192, 8192, 8192, 1, 'bf16');
    // 64 × 64 tiles = 4096 over 132 SMs: 32 waves of 2·128·128·(8192 + 40) FLOP per SM at 700/132 TFLOP/s each.
    const waveNs = (2 * 128 * 128 * 132 * (8192 + 40)) / 700e3;
    expect(opTimeNs(op, gpu, 'bf16')).toBe(Math.round(32 * waveNs + 2000));
    expect(opTimeNs(gemmOp('x', 512, 512, 512, 1, 'fp16'), gpu, 'fp16')).toBe(
      opTimeNs(gemmOp('x', 512, 512, 512, 1, 'fp16'), { ...gpu, measuredGemm: undefined }, 'fp16'),
    );
  });

  it('splits k like cuBLAS when tiles are fewer than the SMs', () => {
    const mg = { tileM: 128, tileN: 128, units: 132, splitKMinK: 256, ceilingTflops: 700, smallKHalf: 0 };
    // One tile, k = 8192: split 32 ways (≤ 132 SMs, k/256) → one wave of k 256 each.
    expect(measuredGemmNs({ m: 128, n: 128, k: 8192, batch: 1 }, mg)).toBeCloseTo(
      (2 * 128 * 128 * 132 * 256) / 700e3,
      6,
    );
  });

  it('interpolates corrections: the measured ratio at a measured shape, shrinking to 1 far from all', () => {
    const pts = [{ m: 1024, n: 1024, k: 1024, ratio: 1.2 }];
    expect(gemmCorrection({ m: 1024, n: 1024, k: 1024, batch: 1 }, pts)).toBeGreaterThan(1.19);
    expect(gemmCorrection({ m: 64, n: 64, k: 64, batch: 1 }, pts)).toBeLessThan(1.001);
    const mid = gemmCorrection({ m: 2048, n: 1024, k: 1024, batch: 1 }, pts);
    expect(mid).toBeGreaterThan(1);
    expect(mid).toBeLessThan(1.2);
    expect(gemmCorrection({ m: 1, n: 1, k: 1, batch: 1 }, undefined)).toBe(1);
  });
});

describe('applying a profile', () => {
  it('matches device names to GPU presets', () => {
    expect(matchGpuPreset('NVIDIA H200')).toBe('h200-sxm-141gb');
    expect(matchGpuPreset('NVIDIA H100 80GB HBM3')).toBe('h100-sxm5-80gb');
    expect(matchGpuPreset('NVIDIA A100-SXM4-80GB', 80 * 2 ** 30)).toBe('a100-sxm4-80gb');
    expect(matchGpuPreset('NVIDIA A100-SXM4-40GB', 40 * 2 ** 30)).toBe('a100-sxm4-40gb');
    expect(matchGpuPreset('NVIDIA A100-PCIE-40GB')).toBe('a100-pcie-40gb');
    expect(matchGpuPreset('Tesla V100-SXM2-32GB')).toBe('v100-sxm2-32gb');
    expect(matchGpuPreset('NVIDIA GeForce RTX 4090')).toBeUndefined();
  });

  it('replaces the GEMM model, launch overhead and memory efficiency of a GPU, keeping the rest of the preset', () => {
    const p = syntheticProfile({ backend: 'cuda', device: 'NVIDIA H200', gpuPreset: 'h200-sxm-141gb', count: 8 });
    const { gpu, applied } = profileGpu(p, H200_SXM_141GB);
    expect(gpu.measuredGemm?.fp32).toEqual(measuredGemmOf(p.fit.gemm.fp32!));
    expect(gpu.kernelLaunchNs).toBeCloseTo(p.fit.launchS * 1e9, 6);
    expect(gpu.hbmEfficiency).toBeCloseTo(4000 / 4800, 9);
    expect(gpu.peakTflops).toEqual(H200_SXM_141GB.peakTflops);
    expect(gpu.memoryBytes).toBe(H200_SXM_141GB.memoryBytes);
    expect(gpu.name).toBe('h200-sxm-141gb (calibrated)');
    expect(applied.join('\n')).toMatch(
      /gemm fp32[\s\S]*launch overhead 4000 →[\s\S]*streaming memory bandwidth 4000 GB\/s/,
    );
    expect(H200_SXM_141GB.measuredGemm).toBeUndefined();
  });

  it('sets intra-node link and PCIe bandwidth from the collective and copy fits', () => {
    const p = syntheticProfile({ backend: 'cuda', device: 'NVIDIA H200', gpuPreset: 'h200-sxm-141gb' });
    const { cluster, applied } = profileCluster(p, { name: 'x', node: HGX_H200, nodes: 2, network: IB_NDR });
    expect(cluster.node.nvlinkBandwidthGBps).toBeCloseTo(linkFit(p)!.busBandwidthGBps, 9);
    expect(cluster.node.pcieBandwidthGBps).toBe(50);
    expect(cluster.nodes).toBe(2);
    expect(cluster.name).toBe('x with h200-sxm-141gb (calibrated)'); // the summary's header says whose devices run it
    expect(applied.some((a) => a.startsWith('intra-node link bandwidth 370 →'))).toBe(true);
    expect(HGX_H200.nvlinkBandwidthGBps).toBe(370);
  });

  it("names the calibrated GPU once when the scenario had already swapped the node preset's GPU for it", () => {
    // resolve.ts names such a cluster '1× pcie-8gpu with h200-sxm-141gb'; the profile replaces that GPU.
    const p = syntheticProfile({ backend: 'cuda', device: 'NVIDIA H200', gpuPreset: 'h200-sxm-141gb' });
    const node = { ...HGX_H200, name: 'pcie-8gpu', gpu: H200_SXM_141GB };
    const { cluster } = profileCluster(p, {
      name: '1× pcie-8gpu with h200-sxm-141gb',
      node,
      nodes: 1,
      network: IB_NDR,
    });
    expect(cluster.name).toBe('1× pcie-8gpu with h200-sxm-141gb (calibrated)');
  });

  it('turns a CPU profile into an fp32 device with the CPU threads as units', () => {
    const p = syntheticProfile();
    const { gpu } = profileGpu(p, DGX_A100_80GB.gpu);
    expect(gpu.name).toBe('cpu: Test CPU');
    expect(gpu.smCount).toBe(2);
    expect(Object.keys(gpu.peakTflops)).toEqual(['fp32']);
    expect(gpu.hbmBandwidthGBps).toBeCloseTo(p.fit.memoryBandwidthGBps, 9);
  });
});

describe('simulating validation workloads with a profile', () => {
  const p = syntheticProfile();
  const rep = { warmup: 1, repeats: 3, inner: 1 };

  it('predicts a GEMM as the fitted model plus launch overhead', () => {
    const s = predictSeconds(p, { kind: 'gemm', dtype: 'fp32', m: 300, n: 500, k: 700, ...rep });
    const expected =
      (measuredGemmNs({ m: 300, n: 500, k: 700, batch: 1 }, measuredGemmOf(p.fit.gemm.fp32!)) + p.fit.launchS * 1e9) /
      1e9;
    expect(s).toBeCloseTo(expected, 8);
    expect(measuredGemmOf(p.fit.gemm.fp32!).ceilingTflops / TRUE_GEMM.ceilingTflops).toBeCloseTo(1, 1);
  });

  it('runs a GEMM chain in order and hides copies behind compute on another stream', () => {
    const gemms = [
      { m: 512, n: 512, k: 512 },
      { m: 512, n: 512, k: 512 },
    ];
    const chain = predictSeconds(p, {
      kind: 'program',
      dtype: 'fp32',
      gemms,
      copies: [],
      direction: 'h2h',
      run: 'compute',
      ...rep,
    });
    const one = predictSeconds(p, { kind: 'gemm', dtype: 'fp32', ...gemms[0], ...rep });
    expect(chain).toBeCloseTo(2 * one, 8);
    const copyS = alphaBetaSeconds(p.fit.copies.h2h, 1 << 20);
    const both = predictSeconds(p, {
      kind: 'program',
      dtype: 'fp32',
      gemms,
      copies: [{ bytes: 1 << 20, after: 0 }],
      direction: 'h2h',
      run: 'both',
      ...rep,
    });
    expect(both).toBeCloseTo(Math.max(2 * one, one + copyS), 8);
  });

  it('reproduces the fitted α–β of a collective through flows on the calibrated topology', () => {
    for (const fit of p.fit.collectives) {
      for (const bytes of [96 * 1024, 6 << 20]) {
        const s = predictSeconds(p, { kind: 'collective', op: fit.op, ranks: fit.ranks, bytes, ...rep });
        expect(s / alphaBetaSeconds(fit, bytes)).toBeCloseTo(1, 3);
      }
    }
  });

  it('says when the profile has nothing to predict a case with', () => {
    expect(() =>
      predictSeconds(p, { kind: 'collective', op: 'reduce_scatter', ranks: 2, bytes: 1024, ...rep }),
    ).toThrow(/no fit for reduce_scatter over 2/);
    expect(() => predictSeconds(p, { kind: 'copy', direction: 'd2h', pinned: true, bytes: 1024, ...rep })).toThrow(
      /no d2h-pinned copy fit/,
    );
  });
});
