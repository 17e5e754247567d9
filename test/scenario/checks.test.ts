import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { resolveScenario } from '../../src/scenario/resolve.js';
import { stageMemories } from '../../src/sim/memory/stageMemory.js';

/** The out-of-sample checks the README and the validation log quote: each loads, and says what was measured where. */
describe('scenarios/checks', () => {
  const dir = 'scenarios/checks';
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  const fms = files.filter((f) => f.startsWith('fms-fsdp-'));
  const dgxc = files.filter((f) => f.startsWith('dgxc-') && !f.startsWith('dgxc-gb200-'));
  const gb200 = files.filter((f) => f.startsWith('dgxc-gb200-'));
  const folding = files.filter((f) => f.startsWith('folding-'));
  const load = (f: string) => {
    const file = loadScenarioFile(join(dir, f));
    return resolveScenario(file.raw, file.source, file.baseDir);
  };

  it(
    'holds the three fms-fsdp Llama-2 runs on A100 and the ' +
      'four DGX Cloud runs on H100 (Nemotron-4, Llama 3.1 with CP)',
    () => {
      expect(fms.sort()).toEqual(['fms-fsdp-llama2-13b.yaml', 'fms-fsdp-llama2-70b.yaml', 'fms-fsdp-llama2-7b.yaml']);
      expect(dgxc.sort()).toEqual([
        'dgxc-llama31-70b-cp2.yaml',
        'dgxc-llama31-8b-cp2.yaml',
        'dgxc-nemotron4-15b.yaml',
        'dgxc-nemotron4-340b.yaml',
      ]);
      expect(folding.sort()).toEqual([
        'folding-mixtral-8x22b-g8t8.yaml',
        'folding-mixtral-8x22b.yaml',
        'folding-qwen2-57b-a14b.yaml',
      ]);
      expect(gb200.sort()).toEqual(['dgxc-gb200-llama31-405b.yaml', 'dgxc-gb200-nemotron4-340b.yaml']);
      expect(files.length).toBe(12);
    },
  );

  it.each(gb200)('%s states its source, its measured step times and its assumptions, and fits on GB200', (f) => {
    const text = readFileSync(join(dir, f), 'utf8');
    expect(text).toMatch(/github\.com\/NVIDIA\/dgxc-benchmarking v25\.05/);
    expect(text).toMatch(/Measured [\d.]+ s a step|[\d.]+ s a step on 128 GPUs/);
    expect(text).toMatch(/64-GPU NVLink domain/);
    expect(text).toMatch(/An out-of-sample check, not a validation row/);
    const s = load(f);
    expect(s.cluster.node.gpu.name).toBe('gb200-186gb');
    expect(s.cluster.nodes * s.cluster.node.gpusPerNode).toBe(128);
    expect(s.training.attentionKernel).toBe('cudnn');
    for (const stage of stageMemories(s)) expect(stage.totalBytes).toBeLessThanOrEqual(s.cluster.node.gpu.memoryBytes);
  });

  it.each(folding)('%s states its source, its measured MFU, what it assumes, and resolves with experts', (f) => {
    const text = readFileSync(join(dir, f), 'utf8');
    expect(text).toMatch(/arXiv 2504\.14960/);
    expect(text).toMatch(/Measured [\d.]+% MFU/);
    expect(text).toMatch(/Not given by the paper, and assumed/);
    const s = load(f);
    expect(s.model.moe).toBeDefined();
    expect(s.cluster.node.gpu.name).toBe('h100-sxm5-80gb');
  });

  it.each([...fms, ...dgxc])('%s states its source, its measurement and its assumptions', (f) => {
    const text = readFileSync(join(dir, f), 'utf8');
    expect(text).toMatch(/foundation-model-stack\/fms-fsdp|github\.com\/NVIDIA\/dgxc-benchmarking/);
    expect(text).toMatch(/measured [\d.]+ tokens\/s per GPU/i);
    expect(text).toMatch(/the network is/);
    expect(text).toMatch(/An out-of-sample check, not a validation row/);
  });

  it.each(fms)('%s resolves on 128 A100, 4k context, eager kernels as IBM ran them', (f) => {
    const s = load(f);
    expect(s.cluster.nodes * s.cluster.node.gpusPerNode).toBe(128);
    expect(s.training.seqLen).toBe(4096);
    expect(s.training.kernels).toBe('eager');
  });

  it.each(dgxc)(
    '%s resolves on DGX H100 with cuDNN attention (Transformer Engine on Hopper), bf16, 4k context (8k with CP 2)',
    (f) => {
      const s = load(f);
      expect(s.cluster.node.gpu.name).toBe('h100-sxm5-80gb');
      expect(s.training.attentionKernel).toBe('cudnn');
      expect(s.training.precision).toBe('bf16');
      const llama = f.startsWith('dgxc-llama31-');
      expect(s.training.seqLen).toBe(llama ? 8192 : 4096);
      expect(s.parallel.cp ?? 1).toBe(llama ? 2 : 1);
    },
  );

  it(
    'fits every DGX Cloud layout in 80 GB, ' + "as the recipes ran them (with the 340B recipe's bf16 optimizer state)",
    () => {
      for (const f of dgxc) {
        const s = load(f);
        const capacity = s.cluster.node.gpu.memoryBytes;
        for (const stage of stageMemories(s))
          expect(stage.totalBytes, `${f} stage ${stage.stage}`).toBeLessThanOrEqual(capacity);
      }
      // The recipe's distributed_fused_adam keeps state and gradients in bf16; with fp32 ones the layout does not fit.
      const nemotron = load('dgxc-nemotron4-340b.yaml');
      const fp32State = {
        ...nemotron,
        training: { ...nemotron.training, optimizerState: undefined },
        parallel: { ...nemotron.parallel, fp32Gradients: true },
      };
      expect(Math.max(...stageMemories(fp32State).map((m) => m.totalBytes))).toBeGreaterThan(
        nemotron.cluster.node.gpu.memoryBytes,
      );
    },
  );
});
