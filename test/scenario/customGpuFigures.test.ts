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
        new RegExp(
          /^GPU mi300x computes with h100-sxm5-80gb's kernel figures where /.source +
            /the scenario gives none \(gemmCeiling, .*\): /.source +
            /set the fields under cluster\.gpu, or measure the GPU with clustersim calibrate/.source,
        ),
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

describe("a GPU of the scenario's own that names its architecture", () => {
  const on = (preset: string, gpu: Record<string, unknown>) =>
    scenarioOf({
      cluster: { preset, nodes: 1, gpu },
      model: { preset: 'llama2-7b', seqLen: 1024 },
      training: { globalBatch: 8, microBatch: 1 },
    });

  it("starts from that generation's reference GPU, and the notes say it was named", () => {
    const s = on('mi300x-8gpu', { name: 'mi325x', architecture: 'cdna3', memoryGiB: 256, hbmBandwidthGBps: 6000 });
    const gpu = s.cluster.node.gpu;
    expect(gpu).toMatchObject({ name: 'mi325x', architecture: 'cdna3', smCount: 304, hbmBandwidthGBps: 6000 });
    expect(gpu.kernelFiguresOf).toMatchObject({ gpu: 'mi300x-192gb', architecture: 'cdna3' });
    expect(simulateStep(s).result.notes.join(' ')).toMatch(
      /the reference CDNA 3 GPU, as cluster\.gpu\.architecture names/,
    );
    // Named on another generation's node, it still starts from its own generation's reference.
    const blackwell = on('dgx-h100', { name: 'b300', architecture: 'blackwell', memoryGiB: 268 });
    expect(blackwell.cluster.node.gpu).toMatchObject({ smCount: 148, computeCapability: 10.0 });
  });

  it('takes the generation a compute capability implies, and names a reference only where it started from one', () => {
    const cc10 = on('dgx-h100', { name: 'my-bw', computeCapability: 10.0 });
    expect(cc10.cluster.node.gpu.architecture).toBe('blackwell');
    const ownHopper = on('hgx-h200', { name: 'h200-nvl', architecture: 'hopper', memoryGiB: 141 });
    expect(ownHopper.cluster.node.gpu.kernelFiguresOf).toMatchObject({ gpu: 'h200-sxm-141gb' });
    expect(ownHopper.cluster.node.gpu.kernelFiguresOf?.architecture).toBeUndefined();
  });

  it('is refused against a preset of another generation, and on an NVLink SHARP node when it is AMD', () => {
    expect(() => on('dgx-h100', { preset: 'h100-sxm5-80gb', architecture: 'blackwell' })).toThrow(
      /cluster\.gpu\.architecture.*is blackwell, but preset h100-sxm5-80gb is hopper/s,
    );
    expect(() => on('dgx-h100', { name: 'mi325x', architecture: 'cdna3' })).toThrow(
      /cluster\.node\.nvls.*NVLink SHARP is an NVIDIA NVSwitch feature/s,
    );
  });
});
