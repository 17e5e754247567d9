import { describe, expect, it } from 'vitest';
import { compileStep } from '../../../src/sim/parallel/stepCompiler.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { scenarioOf } from '../../helpers/scenario.js';
import { InvalidScenarioError } from '../../../src/scenario/errors.js';
import { fineMoeModel } from '../../helpers/models.js';

/**
 * A small fine-grained model with experts: 2 layers, width 2048, 64 experts of 512, top 6, 4 groups of which 2 a token.
 */
const FINE_MOE = fineMoeModel(2, { routingGroups: 4, groupsPerToken: 2 });

function scenario(parallel: Record<string, unknown>, node = 'hgx-h800', nodes = 4) {
  return scenarioOf({
    name: 'deepep',
    cluster: { preset: node, nodes },
    model: FINE_MOE,
    training: { globalBatch: 32, microBatch: 1, seqLen: 4096 },
    parallel,
  });
}

describe('the DeepEP dispatcher in a step', () => {
  it('issues DeepEP exchanges of the same size over the same group in place of the four all-to-alls', () => {
    const plain = compileStep(scenario({ ep: 32 })).program.tasks.filter((t) => t.kind === 'ep-alltoall');
    const deep = compileStep(scenario({ ep: 32, dispatcher: 'deepep' })).program.tasks.filter(
      (t) => t.kind === 'ep-alltoall',
    );
    expect(deep).toHaveLength(plain.length);
    expect(plain.length).toBeGreaterThan(0);
    deep.forEach((t, i) => {
      expect(t.collective!.op).toBe('ep_dispatch');
      expect(t.collective!.bytes).toBe(plain[i].collective!.bytes);
      expect([...t.collective!.group]).toEqual([...plain[i].collective!.group]);
    });
  });

  it('is faster than the all-to-all across nodes, where a token crosses the network once a node', () => {
    const plain = simulateStep(scenario({ ep: 32 })).result;
    const deep = simulateStep(scenario({ ep: 32, dispatcher: 'deepep' })).result;
    expect(deep.stepTimeS).toBeLessThan(plain.stepTimeS);
    expect(deep.parallel.dispatcher).toBe('deepep');
    expect(plain.parallel.dispatcher).toBeUndefined();
    const note = deep.notes.find((n) => n.startsWith('DeepEP dispatch'));
    // 4 nodes of 16 experts = 1 group each; a token reaches 2 groups, so at most 2 nodes (own included).
    expect(note).toMatch(/once to each other node holding one of its experts \(\d\.\d\d of the 3 others/);
    expect(note).toMatch(/group-limited routing: 2 of 4 groups a token/);
  });

  it('is refused without expert parallelism, with expert tensor parallelism, or off NVIDIA NVLink nodes', () => {
    const message = (s: () => unknown) => {
      try {
        s();
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidScenarioError);
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(message(() => scenario({ ep: 1, dispatcher: 'deepep' }))).toMatch(/parallel\.dispatcher.*ep is 1/);
    expect(message(() => scenario({ tp: 2, sequenceParallel: true, ep: 16, dispatcher: 'deepep' }))).toMatch(
      /whole experts on each rank \(etp 1\), not etp 2/,
    );
    expect(message(() => scenario({ ep: 8, dispatcher: 'deepep' }, 'mi300x-8gpu', 1))).toMatch(
      /deepep runs on NVIDIA GPUs/,
    );
    expect(message(() => scenario({ ep: 8, dispatcher: 'deepep' }, 'h100-pcie-8gpu', 1))).toMatch(/needs NVLink/);
  });

  it('is refused where the routing groups do not divide the experts', () => {
    expect(() =>
      scenarioOf({
        name: 'bad groups',
        cluster: { preset: 'hgx-h800', nodes: 1 },
        model: { ...FINE_MOE, moe: { ...FINE_MOE.moe, routingGroups: 5 } },
        training: { globalBatch: 8, microBatch: 1, seqLen: 4096 },
        parallel: { ep: 8 },
      }),
    ).toThrow(/model\.moe\.routingGroups.*must divide the 64 experts/);
  });
});
