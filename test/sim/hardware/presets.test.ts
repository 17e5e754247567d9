import { describe, expect, it } from 'vitest';
import { ScenarioError, UnknownPresetError } from '../../../src/sim/errors.js';
import {
  gpuPreset,
  gpuPresetNames,
  networkPreset,
  networkPresetNames,
  nodePreset,
  nodePresetNames,
  presetNames,
} from '../../../src/sim/hardware/presets.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import type { Dtype } from '../../../src/sim/hardware/types.js';

const GB = 1e9;

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('hardware presets', () => {
  it('lists and finds every requested preset by name', () => {
    expect(gpuPresetNames()).toEqual(
      expect.arrayContaining([
        'v100-sxm2-32gb',
        'a100-sxm4-40gb',
        'a100-sxm4-80gb',
        'h100-sxm5-80gb',
        'h200-sxm-141gb',
        'a100-pcie-40gb',
      ]),
    );
    expect(nodePresetNames()).toEqual(
      expect.arrayContaining(['dgx-1-v100', 'dgx-a100-80gb', 'dgx-h100', 'hgx-h200', 'pcie-8gpu']),
    );
    expect(networkPresetNames()).toEqual([
      'ib-edr',
      'ib-hdr',
      'ib-ndr',
      'ib-xdr',
      'roce-25',
      'roce-100',
      'roce-200',
      'roce-400',
      'roce-800',
    ]);
    for (const n of gpuPresetNames()) expect(gpuPreset(n).name).toBe(n);
    for (const n of nodePresetNames()) expect(nodePreset(n).name).toBe(n);
    expect(presetNames('network')).toEqual(networkPresetNames());
  });

  it('rejects an unknown name with a scenario error that lists the allowed names', () => {
    expect(() => gpuPreset('a100')).toThrow(UnknownPresetError);
    const e = caught(() => nodePreset('dgx-2', 'cluster.node'));
    expect(e).toBeInstanceOf(ScenarioError);
    expect((e as ScenarioError).path).toBe('cluster.node');
    for (const n of nodePresetNames()) expect((e as Error).message).toContain(n);
    expect(() => networkPreset('toString')).toThrow(UnknownPresetError);
  });

  it('suggests the closest preset name for a typo, as unknown fields do', () => {
    // Names a user types from a datasheet or an HF model id: "H100 SXM" without the 5, "Llama-2-70b".
    expect((caught(() => gpuPreset('h100-sxm-80gb', 'cluster.gpu')) as Error).message).toContain(
      "unknown gpu preset 'h100-sxm-80gb' (did you mean 'h100-sxm5-80gb'?)",
    );
    expect((caught(() => networkPreset('ib-hdrr')) as Error).message).toContain("(did you mean 'ib-hdr'?)");
    expect((caught(() => modelPreset('llama-2-70b')) as Error).message).toContain("(did you mean 'llama2-70b'?)");
    // Nothing close: no guess, only the list.
    expect((caught(() => gpuPreset('b200')) as Error).message).not.toContain('did you mean');
  });

  it('has tensor peaks that match SMs × tensor-core FMA rate × boost clock', () => {
    // Dense FLOP/s = SMs × FMA/clock/SM × 2 × clock (whitepapers: V100 8 TCs × 64 FMA at 1.53 GHz; A100 4 TCs ×
    // 256 FP16 FMA at 1.41 GHz; H100 SXM5 4 TCs × 512 FP16 FMA at 1.83 GHz).
    const tf = (sms: number, fmaPerSm: number, ghz: number) => (sms * fmaPerSm * 2 * ghz) / 1e3;
    expect(gpuPreset('v100-sxm2-32gb').peakTflops.fp16).toBeCloseTo(tf(80, 512, 1.53), 0);
    expect(gpuPreset('a100-sxm4-80gb').peakTflops.bf16).toBeCloseTo(tf(108, 1024, 1.41), 0);
    expect(gpuPreset('h100-sxm5-80gb').peakTflops.bf16! / tf(132, 2048, 1.83)).toBeCloseTo(1, 2);
    expect(gpuPreset('h100-sxm5-80gb').peakTflops.fp8).toBeCloseTo(2 * gpuPreset('h100-sxm5-80gb').peakTflops.bf16!, 0);
    expect(gpuPreset('h100-sxm5-80gb').peakTflops.tf32).toBeCloseTo(
      gpuPreset('h100-sxm5-80gb').peakTflops.bf16! / 2,
      0,
    );
  });

  it('leaves out dtypes a GPU has no tensor path for', () => {
    const v100 = gpuPreset('v100-sxm2-32gb');
    expect(v100.peakTflops.bf16).toBeUndefined();
    expect(v100.peakTflops.tf32).toBeUndefined();
    expect(v100.peakTflops.fp8).toBeUndefined();
    expect(gpuPreset('a100-sxm4-80gb').peakTflops.fp8).toBeUndefined();
  });

  it('keeps efficiencies in (0, 1] and sets a GEMM ceiling only where there is a peak', () => {
    for (const n of gpuPresetNames()) {
      const g = gpuPreset(n);
      expect(g.hbmEfficiency).toBeGreaterThan(0.5);
      expect(g.hbmEfficiency).toBeLessThanOrEqual(1);
      for (const [dtype, c] of Object.entries(g.gemmCeiling)) {
        expect(g.peakTflops[dtype as Dtype]).toBeGreaterThan(0);
        expect(c).toBeGreaterThan(0.5);
        expect(c).toBeLessThanOrEqual(1);
      }
      expect(g.source.length).toBeGreaterThan(40);
    }
  });

  it('takes the bf16 GEMM ceilings from the published MAMF measurements', () => {
    // ml-engineering MAMF table: A100 SXM 267.9, A100 PCIe 256.4, H100 SXM 792.1 of the dense peak.
    expect(gpuPreset('a100-sxm4-80gb').gemmCeiling.bf16! * 312).toBeCloseTo(267.9, 0);
    expect(gpuPreset('a100-pcie-40gb').gemmCeiling.bf16! * 312).toBeCloseTo(256.4, 0);
    expect(gpuPreset('h100-sxm5-80gb').gemmCeiling.bf16! * 989).toBeCloseTo(792.1, 0);
  });

  it('has datasheet memory sizes, HBM bandwidths and NVLink rates of 25 GB/s per link and direction', () => {
    const approxGB = (n: string) => gpuPreset(n).memoryBytes / GB;
    expect(approxGB('v100-sxm2-32gb')).toBeCloseTo(34.4, 1); // 32 GiB
    expect(approxGB('a100-sxm4-80gb')).toBeCloseTo(85.9, 1); // 80 GiB
    expect(approxGB('h200-sxm-141gb')).toBeGreaterThan(141);
    expect(gpuPreset('h100-sxm5-80gb').hbmBandwidthGBps).toBe(3350);
    expect(gpuPreset('h200-sxm-141gb').hbmBandwidthGBps).toBe(4800);
    expect(gpuPreset('v100-sxm2-32gb').nvlinkBandwidthGBps).toBe(6 * 25);
    expect(gpuPreset('a100-sxm4-40gb').nvlinkBandwidthGBps).toBe(12 * 25);
    expect(gpuPreset('h100-sxm5-80gb').nvlinkBandwidthGBps).toBe(18 * 25);
    expect(gpuPreset('a100-pcie-40gb').nvlinkBandwidthGBps).toBe(0);
  });

  it('sets node NVLink bandwidth to published 8-GPU all-reduce bus bandwidth, below the line rate', () => {
    // nccl-tests: DGX A100 ~230 GB/s (nccl-tests#149); H100 ring 365-370 GB/s (nccl#1455, nccl-tests#309).
    expect(nodePreset('dgx-a100-80gb').nvlinkBandwidthGBps).toBeGreaterThanOrEqual(220);
    expect(nodePreset('dgx-a100-80gb').nvlinkBandwidthGBps).toBeLessThanOrEqual(235);
    expect(nodePreset('dgx-h100').nvlinkBandwidthGBps).toBeGreaterThanOrEqual(360);
    expect(nodePreset('dgx-h100').nvlinkBandwidthGBps).toBeLessThanOrEqual(375);
    for (const n of nodePresetNames()) {
      const node = nodePreset(n);
      expect(node.nvlinkBandwidthGBps).toBeLessThanOrEqual(node.gpu.nvlinkBandwidthGBps);
      // NVLink SHARP: third-generation NVSwitch and later (Hopper's, Blackwell's), never without a switch.
      expect(node.nvls).toBe(['dgx-h100', 'hgx-h200', 'hgx-b200', 'gb200-nvl72'].includes(n));
      expect(node.gpusPerNode % node.gpusPerPcieSwitch).toBe(0);
    }
    expect(nodePreset('pcie-8gpu')).toMatchObject({ intra: 'pcie', nvlinkBandwidthGBps: 0 });
  });

  it('describes the DGX-1 hybrid cube-mesh: 6 NVLinks per V100, a common neighbour for every other pair', () => {
    const node = nodePreset('dgx-1-v100');
    const mesh = node.nvlinkMesh!;
    const links = new Array(8).fill(0);
    const adj = new Set<string>();
    for (const p of mesh) {
      links[p.a] += p.links;
      links[p.b] += p.links;
      adj.add(`${p.a}-${p.b}`).add(`${p.b}-${p.a}`);
    }
    expect(links).toEqual(new Array(8).fill(6));
    expect(adj.size).toBe(2 * mesh.length); // no pair listed twice
    for (let a = 0; a < 8; a++) {
      for (let b = a + 1; b < 8; b++) {
        if (adj.has(`${a}-${b}`)) continue;
        expect([...Array(8).keys()].some((k) => adj.has(`${a}-${k}`) && adj.has(`${k}-${b}`))).toBe(true);
      }
    }
  });

  it('has network efficiencies that reproduce the published per-NIC NCCL bandwidth', () => {
    // HDR: ~24 GB/s per NIC (nccl#412); NDR: 46-48 GB/s per NIC (nccl-tests#290).
    const perNic = (n: string) => (networkPreset(n).linkGbps / 8) * networkPreset(n).linkEfficiency;
    expect(perNic('ib-hdr')).toBeCloseTo(24, 0);
    expect(perNic('ib-ndr')).toBeGreaterThanOrEqual(46);
    expect(perNic('ib-ndr')).toBeLessThanOrEqual(48);
    for (const n of networkPresetNames()) {
      const net = networkPreset(n);
      expect(net.linkEfficiency).toBeLessThanOrEqual(1);
      expect(net.oversubscription).toBeGreaterThanOrEqual(1);
      expect(net.linkGbps).toBe(
        Number(n.split('-')[1].replace('edr', '100').replace('hdr', '200').replace('ndr', '400').replace('xdr', '800')),
      );
    }
  });
});
