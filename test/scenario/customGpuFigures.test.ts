import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../src/sim/simulateStep.js';
import { scenarioOf } from '../helpers/scenario.js';

/** One DGX H100 whose GPU the scenario replaces with `gpu`. */
const withGpu = (gpu: Record<string, unknown> | string) =>
  scenarioOf({
    cluster: { preset: 'dgx-h100', nodes: 1, gpu },
    model: { preset: 'llama2-7b', seqLen: 1024 },
    training: { globalBatch: 8, microBatch: 1 },
  });

describe('a GPU a scenario defines under a name of its own', () => {
  it("says whose kernel figures it computes with, and which, on the step's notes", () => {
    const s = withGpu({ name: 'mi300x', peakTflops: { bf16: 1307 }, memoryGiB: 192, hbmBandwidthGBps: 5300 });
    expect(s.cluster.node.gpu.kernelFiguresOf).toEqual({
      gpu: 'h100-sxm5-80gb',
      figures: [
        'gemmCeiling',
        'sustainedGemmFraction',
        'smCount',
        'computeCapability',
        'hbmEfficiency',
        'kernelLaunchNs',
        'attention-kernel figures',
        'misaligned-GEMM slowdowns',
      ],
    });
    const notes = simulateStep(s).result.notes;
    expect(notes).toContainEqual(
      expect.stringMatching(
        /^GPU mi300x computes with h100-sxm5-80gb's kernel figures where the scenario gives none \(gemmCeiling, .*\): set the fields under cluster\.gpu, or measure the GPU with clustersim calibrate/,
      ),
    );
  });

  it('lists only what it did not give, and the tables no field sets', () => {
    const s = withGpu({
      name: 'x1',
      gemmCeiling: { bf16: 0.7 },
      sustainedGemmFraction: 0.9,
      smCount: 304,
      computeCapability: 9.4,
      hbmEfficiency: 0.8,
      kernelLaunchNs: 4000,
    });
    expect(s.cluster.node.gpu.kernelFiguresOf?.figures).toEqual([
      'attention-kernel figures',
      'misaligned-GEMM slowdowns',
    ]);
  });

  it("says nothing for a preset GPU, a preset with changes, or the node's GPU with a field changed", () => {
    expect(withGpu('a100-sxm4-80gb').cluster.node.gpu.kernelFiguresOf).toBeUndefined();
    expect(withGpu({ preset: 'a100-sxm4-80gb', memoryGiB: 40 }).cluster.node.gpu.kernelFiguresOf).toBeUndefined();
    // No new name: the node's own GPU, modified (its header says so).
    const modified = withGpu({ memoryGiB: 96 });
    expect(modified.cluster.node.gpu.kernelFiguresOf).toBeUndefined();
    expect(modified.cluster.node.gpu.name).toBe('h100-sxm5-80gb (modified)');
  });
});
