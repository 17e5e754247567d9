import { describe, expect, it } from 'vitest';
import { gpuPreset, nodePreset, networkPreset } from '../../../src/sim/hardware/presets.js';
import { architectureOf, traitsOf } from '../../../src/sim/hardware/architectures.js';
import { SUSTAINED_GEMM_FRACTION } from '../../../src/sim/hardware/sustainedGemm.js';
import { opTimeNs } from '../../../src/sim/workload/kernelTime.js';
import { fp8LinearStage } from '../../../src/sim/workload/fp8.js';
import { GiB } from '../../../src/sim/engine/units.js';

/**
 * The GPUs, nodes and networks of 2024–26, each figure against the published one it rests on (the sources are named
 * beside each preset in src/sim/hardware): dense peaks are half NVIDIA's sparse figures.
 */
describe('GPU presets of 2024-26 against their datasheets', () => {
  it.each([
    // name, bf16, fp8, fp32, HBM GB/s, SMs or CUs, links each way GB/s (NVIDIA spec table, AMD ROCm docs, datasheets)
    ['b200-sxm-180gb', 2250, 4500, 75, 7700, 148, 900],
    ['gb200-186gb', 2500, 5000, 80, 8000, 148, 900],
    ['h100-pcie-80gb', 756, 1513, 51, 2000, 114, 0],
    ['l40s-48gb', 362.05, 733, 91.6, 864, 142, 0],
    ['mi300x-192gb', 1307.4, 2614.9, 163.4, 5300, 304, 448],
    ['mi355x-288gb', 2500, 5000, 157.3, 8000, 256, 535.5],
  ])(
    '%s: bf16 %d, fp8 %d, fp32 %d TFLOP/s, %d GB/s, %d SMs, %d GB/s of GPU links',
    (name, bf16, fp8, fp32, hbm, sms, links) => {
      const g = gpuPreset(name);
      expect(g.peakTflops).toMatchObject({ bf16, fp16: bf16, fp8, fp32 });
      expect(g.hbmBandwidthGBps).toBe(hbm);
      expect(g.smCount).toBe(sms);
      expect(g.nvlinkBandwidthGBps).toBe(links);
    },
  );

  it(
    'keeps the published memory sizes: 180, 186, ' + '192 and 288 GB parts, the B200 at its device-reported 178.35 GiB',
    () => {
      expect(gpuPreset('b200-sxm-180gb').memoryBytes / GiB).toBeCloseTo(178.35, 1);
      expect(gpuPreset('mi300x-192gb').memoryBytes).toBe(192 * GiB);
      expect(gpuPreset('mi355x-288gb').memoryBytes).toBe(288 * GiB);
      expect(gpuPreset('l40s-48gb').memoryBytes).toBe(48 * GiB);
    },
  );

  it(
    'takes the GEMM ceilings from the MAMF table: ' +
      'B200 1,745 / 2,250 and fp8 3,432.5 / 4,500, MI300X 668.4 / 1,307.4',
    () => {
      expect(gpuPreset('b200-sxm-180gb').gemmCeiling.bf16).toBeCloseTo(1745 / 2250, 3);
      expect(gpuPreset('b200-sxm-180gb').gemmCeiling.fp8).toBeCloseTo(3432.5 / 4500, 3);
      expect(gpuPreset('gb200-186gb').gemmCeiling.bf16).toBeCloseTo(1822 / 2500, 3);
      expect(gpuPreset('gb200-186gb').gemmCeiling.fp8).toBeCloseTo(3615.6 / 5000, 3);
      expect(gpuPreset('mi300x-192gb').gemmCeiling.bf16).toBeCloseTo(668.4 / 1307.4, 3);
      expect(gpuPreset('mi355x-288gb').gemmCeiling.bf16).toBeCloseTo(1565 / 2500, 3);
    },
  );

  it(
    "names each GPU's generation, " + "and takes Hopper's sustained fraction where no generation of its own is fitted",
    () => {
      const arch = ['b200-sxm-180gb', 'gb200-186gb', 'h100-pcie-80gb', 'l40s-48gb', 'mi300x-192gb', 'mi355x-288gb'].map(
        (n) => architectureOf(gpuPreset(n)),
      );
      expect(arch).toEqual(['blackwell', 'blackwell', 'hopper', 'ada', 'cdna3', 'cdna4']);
      for (const n of ['b200-sxm-180gb', 'gb200-186gb', 'l40s-48gb', 'mi300x-192gb', 'mi355x-288gb'])
        expect(gpuPreset(n).sustainedGemmFraction).toBe(SUSTAINED_GEMM_FRACTION.hopper);
      expect(traitsOf(gpuPreset('mi300x-192gb'))).toMatchObject({ collectiveLibrary: 'RCCL', tpCommOverlap: false });
      expect(traitsOf(gpuPreset('b200-sxm-180gb'))).toMatchObject({
        collectiveLibrary: 'NCCL',
        ncclGeneration: 'blackwell',
      });
    },
  );

  it("times a large FP8 GEMM on B200 at its FP8 peak × MAMF's 0.763 × Hopper's sustained 0.889 (closed form)", () => {
    const b200 = gpuPreset('b200-sxm-180gb');
    const layer = { name: 'fc1', tokens: 16384, inF: 16384, outF: 16384, params: ['w'], input: 'tensor' as const };
    const gemm = fp8LinearStage(layer, 'delayed').forward[1];
    // 16384² outputs in 128 × 128 tiles over 148 SMs: 16,384 tiles in 111 waves, 0.9973 of the SMs busy.
    const waves = 16384 / (Math.ceil(16384 / 148) * 148);
    const expectedNs = gemm.flops / (4500e3 * 0.763 * 0.889 * waves) + b200.kernelLaunchNs;
    expect(opTimeNs(gemm, b200, 'bf16')).toBeGreaterThan(expectedNs * 0.98);
    expect(opTimeNs(gemm, b200, 'bf16')).toBeLessThan(expectedNs * 1.03);
  });
});

describe('node and network presets of 2024-26', () => {
  it('sets GPU links to the measured ring bus bandwidth: 682 GB/s on 8 B200, 680 on NVL72, 7 × 45.5 on MI300X', () => {
    expect(nodePreset('hgx-b200').nvlinkBandwidthGBps).toBe(682);
    expect(nodePreset('gb200-nvl72')).toMatchObject({ gpusPerNode: 72, nicsPerNode: 72, nvlinkBandwidthGBps: 680 });
    expect(nodePreset('mi300x-8gpu').nvlinkBandwidthGBps).toBeCloseTo(7 * 45.5, 6);
  });

  it('joins the 8 GPUs of an AMD node by one link a pair, 28 in all, with no switch to reduce in', () => {
    for (const n of ['mi300x-8gpu', 'mi355x-8gpu']) {
      const node = nodePreset(n);
      expect(node).toMatchObject({ intra: 'nvlink-mesh', nvls: false });
      expect(node.nvlinkMesh).toHaveLength(28);
      expect(new Set(node.nvlinkMesh!.map((p) => `${p.a}-${p.b}`)).size).toBe(28);
      expect(node.nvlinkMesh!.every((p) => p.links === 1)).toBe(true);
    }
  });

  it('runs 800G fabrics at 800 Gb/s a port, XDR in 72-node leaves as the B300-XDR SuperPOD lays them out', () => {
    expect(networkPreset('ib-xdr')).toMatchObject({ linkGbps: 800, railOptimized: true, nodesPerLeaf: 72 });
    expect(networkPreset('roce-800')).toMatchObject({ fabric: 'ethernet', linkGbps: 800, railOptimized: true });
    expect(networkPreset('roce-200')).toMatchObject({ fabric: 'ethernet', linkGbps: 200 });
  });
});
