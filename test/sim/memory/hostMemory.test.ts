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
  it(
    'holds 18 bytes per parameter of the shard for mixed Adam, ' +
      '20 at stages 1-2 with accumulation, and none without offload',
    () => {
      // DeepSpeed's host buffers: fp32 master 4 + momentum 4 + variance 4 + fp32 gradient 4, and one partition in the
      // weights' type (stage_1_and_2.py param_buffer_of_bit16_for_cpu_offload_groups; stage3.py
      // grad_partitions_flat_buffer); stages 1-2 accumulate micro-batches' gradients on the host in the weights'
      // type (accumulated_grads_in_cpu).
      const base = { paramsPerRank: 8e9, dp: 8, precision: 'mixed' as const, optimizer: 'adam' as const };
      expect(offloadHostBytes({ ...base, zero: 3, offloadOptimizer: true })).toBe((18 * 8e9) / 8);
      expect(offloadHostBytes({ ...base, zero: 3, offloadOptimizer: true, microBatches: 4 })).toBe((18 * 8e9) / 8);
      expect(offloadHostBytes({ ...base, zero: 1, offloadOptimizer: true })).toBe((18 * 8e9) / 8);
      expect(offloadHostBytes({ ...base, zero: 2, offloadOptimizer: true, microBatches: 4 })).toBe((20 * 8e9) / 8);
      expect(offloadHostBytes({ ...base, zero: 3, offloadOptimizer: false })).toBe(0);
      // fp32 training: the fp32 weights CPU-Adam updates are the weights themselves, 4 + 8 (m, v) + 4
      // (gradient) + 4 (fp32 staging).
      expect(offloadHostBytes({ ...base, precision: 'fp32', zero: 2, offloadOptimizer: true })).toBe((20 * 8e9) / 8);
    },
  );

  it(
    'makes a step that fits the GPUs but not the host memory not fit, ' + 'in simulate, memory and scale alike',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'hostmem-'));
      const file = join(dir, 's.yaml');
      writeFileSync(
        file,
        'cluster: { preset: dgx-a100-80gb, nodes: 1, node: { hostMemoryGiB: 64 } }\n' +
          'model: { preset: llama2-7b, seqLen: 1024 }\n' +
          'training: { globalBatch: 8, microBatch: 1 }\n' +
          'parallel: { zero: 3, offload: cpu }\n',
      );
      const { row } = simulatePoint(planSeries(loadScenarioFile(file), 'strong'), 8);
      expect(row).toMatchObject({ status: 'oom', fits: false });
      expect(row.reason).toMatch(/^host memory short by [\d.]+ GiB per node \(CPU offload\)$/);
      // One verdict for the job in every command: fits is false, gpuFits says the GPUs alone would hold it.
      const sim = JSON.parse((await cli('simulate', file, '--json', '--alternatives', '0')).out);
      expect(sim.memory).toMatchObject({ fits: false, gpuFits: true, shortfallBytes: 0, host: { fits: false } });
      const mem = await cli('memory', file, '--json');
      expect(JSON.parse(mem.out)).toMatchObject({ fits: false, gpuFits: true, host: { fits: false } });
      const text = await cli('memory', file);
      expect(text.out.trimEnd()).toMatch(
        new RegExp(
          /Every stage fits on its GPUs\.\n.*does not fit, short by .*\nDoes not fit: /.source +
            /the GPUs hold their share, the hosts do not hold the offloaded /.source +
            /state\.\nZeRO-3 as PyTorch FSDP gathers it: .*\nError band: /.source,
        ),
      );
      // With the capacity not stated, nothing is known to be short: the job fits.
      writeFileSync(
        file,
        'cluster: { preset: pcie-8gpu, nodes: 1 }\n' +
          'model: { preset: llama2-7b, seqLen: 1024 }\n' +
          'training: { globalBatch: 8, microBatch: 1 }\n' +
          'parallel: { zero: 3, offload: cpu }\n',
      );
      expect(JSON.parse((await cli('memory', file, '--json')).out)).toMatchObject({ fits: true, gpuFits: true });
    },
  );

  it(
    "sums a node's ranks to what DeepSpeed allocates for ZeRO-3 offload: " +
      '18 × params per node with all ranks on one node',
    () => {
      const s = llama70b({ preset: 'dgx-a100-80gb' }, {});
      const h = hostMemoryPerNode(s, stageMemories(s))!;
      expect(h.bytesPerNode).toBeCloseTo(18 * parameterCount(s.model), -4);
      // 70B × 18 B ≈ 1.13 TiB: fits the 2 TB of a DGX A100 640GB, not the 1 TB of the 320GB system.
      expect(h).toMatchObject({ capacityBytes: 2048 * GiB, fits: true, shortfallBytes: 0 });
      const small = llama70b({ preset: 'dgx-a100-40gb' }, {});
      const short = hostMemoryPerNode(small, stageMemories(small))!;
      expect(short.fits).toBe(false);
      expect(short.shortfallBytes).toBeCloseTo(short.bytesPerNode - 1024 * GiB, 0);
    },
  );

  it(
    'splits the state over the nodes the data-parallel ranks span, ' +
      'and takes the size from cluster.node.hostMemoryGiB',
    () => {
      const two = llama70b({ preset: 'dgx-a100-80gb', nodes: 2, node: { hostMemoryGiB: 256 } }, {});
      const h = hostMemoryPerNode(two, stageMemories(two))!;
      expect(h.bytesPerNode).toBeCloseTo((18 * parameterCount(two.model)) / 2, -4);
      expect(h.capacityBytes).toBe(256 * GiB);
      expect(h.fits).toBe(false);
    },
  );

  it('leaves the verdict open where the node does not state its host memory, and is absent without offload', () => {
    const pcie = llama70b({ preset: 'pcie-8gpu' }, {});
    const h = hostMemoryPerNode(pcie, stageMemories(pcie))!;
    expect(h.capacityBytes).toBeUndefined();
    expect(h.fits).toBeUndefined();
    const none = llama70b({ preset: 'dgx-a100-80gb' }, { offload: 'none' });
    expect(hostMemoryPerNode(none, stageMemories(none))).toBeUndefined();
  });
});
