import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { InvalidScenarioError } from '../../../src/scenario/errors.js';
import { scenarioOf } from '../../helpers/scenario.js';

const raw = (parallel: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  cluster: { preset: 'dgx-h100', nodes: 4 },
  model: { preset: 'llama2-7b', seqLen: 2048, layers: 8 },
  training: { globalBatch: 64, microBatch: 2 },
  parallel: { zero: 1, ...parallel },
  ...extra,
});

describe("Megatron's --overlap-param-gather (parallel.overlapParamGather)", () => {
  it(
    'moves the weight all-gather under the next forward: ' +
      'the step loses most of its exposed gather, and the first layer waits for its bucket',
    () => {
      const after = simulateStep(scenarioOf(raw({}))).result;
      const run = simulateStep(scenarioOf(raw({ overlapParamGather: true })));
      const overlapped = run.result;
      expect(after.bottleneck.detail).toMatch(/all-gather of the updated weights/);
      expect(overlapped.stepTimeS).toBeLessThan(after.stepTimeS);
      expect(overlapped.breakdown.exposedCommS).toBeLessThan(0.5 * after.breakdown.exposedCommS);
      expect(overlapped.parallel.overlapParamGather).toBe(true);
      expect(after.parallel.overlapParamGather).toBeUndefined();
      // The trace: the gathers open the step, in forward order; the embedding's forward
      // starts after the first one ends.
      const { program } = run.trace;
      const gathers = program.tasks.filter((t) => t.kind === 'dp-allgather');
      expect(gathers.length).toBeGreaterThan(1);
      const first = gathers[0];
      expect(run.trace.startNs[first.id]).toBe(0);
      const embeddingForward = program.tasks.find(
        (t) => t.kind === 'forward' && t.label.includes('embedding') && t.label.includes('mb0'),
      );
      expect(embeddingForward).toBeDefined();
      expect(run.trace.startNs[embeddingForward!.id]).toBeGreaterThanOrEqual(run.trace.endNs[first.id]);
    },
  );

  it(
    'changes nothing without data parallelism, ' +
      'and agrees between symmetric and full fidelity with an interleaved pipeline',
    () => {
      const one = (o: boolean) =>
        simulateStep(
          scenarioOf({
            ...raw({ overlapParamGather: o }),
            cluster: { preset: 'dgx-h100', nodes: 1 },
            training: { globalBatch: 16, microBatch: 2 },
            parallel: { zero: 1, tp: 8, overlapParamGather: o },
          }),
        ).result.stepTimeS;
      expect(one(true)).toBe(one(false));
      const piped = (fidelity: string, o: boolean) =>
        simulateStep(
          scenarioOf(
            raw(
              {
                tp: 4,
                pp: 2,
                schedule: 'interleaved',
                virtualStages: 2,
                sequenceParallel: true,
                overlapParamGather: o,
              },
              { simulation: { fidelity }, training: { globalBatch: 64, microBatch: 1 } },
            ),
          ),
        ).result.stepTimeS;
      expect(piped('full', true)).toBeCloseTo(piped('symmetric', true), 6);
      expect(piped('symmetric', true)).toBeLessThan(piped('symmetric', false));
    },
  );

  it(
    "launches each stage's gathers as it needs them without " +
      'interleaving (Megatron turns alignment off), together with it',
    () => {
      const gathersOf = (schedule: string) => {
        const run = simulateStep(
          scenarioOf(
            raw(
              { tp: 4, pp: 2, schedule, virtualStages: 2, sequenceParallel: true, overlapParamGather: true },
              { training: { globalBatch: 64, microBatch: 1 } },
            ),
          ),
        );
        const { program } = run.trace;
        const onStage1 = (t: { ranks: readonly number[] }) => t.ranks.some((r) => run.plan.layout.coords(r).p === 1);
        const gathers = program.tasks.filter((t) => t.kind === 'dp-allgather' && onStage1(t));
        const received = program.tasks.filter(
          (t) => t.kind === 'pp-send' && t.ranks.length === 2 && run.plan.layout.coords(t.ranks[1]).p === 1,
        );
        return {
          firstGatherStart: Math.min(...gathers.map((t) => run.trace.startNs[t.id])),
          firstReceiveEnd: Math.min(...received.map((t) => run.trace.endNs[t.id])),
        };
      };
      // 1F1B: stage 1's first gather waits until its first forward can start, after the activations arrive.
      const plain = gathersOf('1f1b');
      expect(plain.firstGatherStart).toBeGreaterThanOrEqual(plain.firstReceiveEnd);
      // Interleaved: every stage launches at the start of the step.
      expect(gathersOf('interleaved').firstGatherStart).toBe(0);
    },
  );

  it('is refused where there is no Megatron distributed optimizer to overlap', () => {
    const problems = (parallel: Record<string, unknown>, training: Record<string, unknown> = {}) => {
      try {
        scenarioOf({ ...raw(parallel), training: { globalBatch: 64, microBatch: 2, ...training } });
      } catch (err) {
        if (err instanceof InvalidScenarioError) return err.problems;
        throw err;
      }
      return [];
    };
    expect(problems({ zero: 2, overlapParamGather: true })).toEqual([
      expect.objectContaining({
        path: 'parallel.overlapParamGather',
        message: expect.stringMatching(/needs zero 1 with zeroConfig.stage1 megatron \(not zero 2\)/),
      }),
    ]);
    expect(problems({ overlapParamGather: true }, { framework: 'megatron-deepspeed' })).toEqual([
      expect.objectContaining({
        path: 'parallel.overlapParamGather',
        message: expect.stringMatching(/not zero 1, stage1 deepspeed/),
      }),
    ]);
    expect(problems({ overlapParamGather: true, zeroConfig: { overlapComm: false } })).toEqual([
      expect.objectContaining({
        path: 'parallel.overlapParamGather',
        message: expect.stringMatching(/needs the gradient reduction overlapped too/),
      }),
    ]);
  });
});
