import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadScenarioFile } from '../../../src/scenario/load.js';
import { hostMemoryPerNode } from '../../../src/sim/memory/hostMemory.js';
import { cli } from '../../helpers/cli.js';
import { planSeries, simulatePoint } from '../../../src/sweep/scale.js';
import { offloadHostBytes } from '../../../src/sim/memory/memory.js';
import { stageMemories } from '../../../src/sim/memory/stageMemory.js';
import { parameterCount } from '../../../src/sim/workload/model.js';
import { scenarioOf } from '../../helpers/scenario.js';

const GiB = 2 ** 30;

function llama70b(cluster: Record<string, unknown>, parallel: Record<string, unknown>) {
  return scenarioOf({
    cluster: { nodes: 1, ...cluster },
    model: { preset: 'llama2-70b', seqLen: 1024 },
    training: { globalBatch: 16, microBatch: 1 },
    parallel: { zero: 3, offload: 'cpu', recompute: 'full', ...parallel },
  });
}

describe('host memory under optimizer offload', () => {
  it('holds 16 bytes per parameter of the shard for mixed Adam (fp32 master, momentum, variance, gradient) and none without offload', () => {
    const base = { paramsPerRank: 8e9, dp: 8, precision: 'mixed' as const, optimizer: 'adam' as const };
    expect(offloadHostBytes({ ...base, zero: 3, offloadOptimizer: true })).toBe((16 * 8e9) / 8);
    expect(offloadHostBytes({ ...base, zero: 1, offloadOptimizer: true })).toBe((16 * 8e9) / 8);
    expect(offloadHostBytes({ ...base, zero: 3, offloadOptimizer: false })).toBe(0);
    // fp32 training: the fp32 weights CPU-Adam updates are the weights themselves, 4 + 8 (m, v) + 4 (gradient).
    expect(offloadHostBytes({ ...base, precision: 'fp32', zero: 2, offloadOptimizer: true })).toBe((16 * 8e9) / 8);
  });

  it('makes a step that fits the GPUs but not the host memory not fit, in simulate, memory and scale alike', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hostmem-'));
    const file = join(dir, 's.yaml');
    writeFileSync(file, 'cluster: { preset: dgx-a100-80gb, nodes: 1, node: { hostMemoryGiB: 64 } }\nmodel: { preset: llama2-7b, seqLen: 1024 }\ntraining: { globalBatch: 8, microBatch: 1 }\nparallel: { zero: 3, offload: cpu }\n');
    const { row } = simulatePoint(planSeries(loadScenarioFile(file), 'strong'), 8);
    expect(row).toMatchObject({ status: 'oom', fits: false });
    expect(row.reason).toMatch(/^host memory short by [\d.]+ GiB per node \(CPU offload\)$/);
    // One verdict for the job in every command: fits is false, gpuFits says the GPUs alone would hold it.
    const sim = JSON.parse((await cli('simulate', file, '--json', '--alternatives', '0')).out);
    expect(sim.memory).toMatchObject({ fits: false, gpuFits: true, shortfallBytes: 0, host: { fits: false } });
    const mem = await cli('memory', file, '--json');
    expect(JSON.parse(mem.out)).toMatchObject({ fits: false, gpuFits: true, host: { fits: false } });
    const text = await cli('memory', file);
    expect(text.out.trimEnd()).toMatch(/Every stage fits on its GPUs\.\n.*does not fit, short by .*\nDoes not fit: the GPUs hold their share, the hosts do not hold the offloaded state\.$/);
    // With the capacity not stated, nothing is known to be short: the job fits.
    writeFileSync(file, 'cluster: { preset: pcie-8gpu, nodes: 1 }\nmodel: { preset: llama2-7b, seqLen: 1024 }\ntraining: { globalBatch: 8, microBatch: 1 }\nparallel: { zero: 3, offload: cpu }\n');
    expect(JSON.parse((await cli('memory', file, '--json')).out)).toMatchObject({ fits: true, gpuFits: true });
  });

  it("sums a node's ranks to DeepSpeed's estimate without its buffer factor: 16 × params per node with all ranks on one node", () => {
    const s = llama70b({ preset: 'dgx-a100-80gb' }, {});
    const h = hostMemoryPerNode(s, stageMemories(s))!;
    expect(h.bytesPerNode).toBeCloseTo(16 * parameterCount(s.model), -4);
    // 70B × 16 B ≈ 1.0 TiB: fits the 2 TB of a DGX A100 640GB, not the 1 TB of the 320GB system.
    expect(h).toMatchObject({ capacityBytes: 2048 * GiB, fits: true, shortfallBytes: 0 });
    const small = llama70b({ preset: 'dgx-a100-40gb' }, {});
    const short = hostMemoryPerNode(small, stageMemories(small))!;
    expect(short.fits).toBe(false);
    expect(short.shortfallBytes).toBeCloseTo(short.bytesPerNode - 1024 * GiB, 0);
  });

  it('splits the state over the nodes the data-parallel ranks span, and takes the size from cluster.node.hostMemoryGiB', () => {
    const two = llama70b({ preset: 'dgx-a100-80gb', nodes: 2, node: { hostMemoryGiB: 256 } }, {});
    const h = hostMemoryPerNode(two, stageMemories(two))!;
    expect(h.bytesPerNode).toBeCloseTo((16 * parameterCount(two.model)) / 2, -4);
    expect(h.capacityBytes).toBe(256 * GiB);
    expect(h.fits).toBe(false);
  });

  it('leaves the verdict open where the node does not state its host memory, and is absent without offload', () => {
    const pcie = llama70b({ preset: 'pcie-8gpu' }, {});
    const h = hostMemoryPerNode(pcie, stageMemories(pcie))!;
    expect(h.capacityBytes).toBeUndefined();
    expect(h.fits).toBeUndefined();
    const none = llama70b({ preset: 'dgx-a100-80gb' }, { offload: 'none' });
    expect(hostMemoryPerNode(none, stageMemories(none))).toBeUndefined();
  });
});
