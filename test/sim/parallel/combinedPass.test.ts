import { describe, expect, it } from 'vitest';
import { compileStep } from '../../../src/sim/parallel/stepCompiler.js';
import { combinedUnits, stageSchedule } from '../../../src/sim/parallel/schedules.js';
import { deadlockFreeUnits } from '../../../src/sim/parallel/combinedSchedule.js';
import { stageMemories } from '../../../src/sim/memory/stageMemory.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { importMegatronArgs } from '../../../src/scenario/importMegatron.js';
import { scenarioOf } from '../../helpers/scenario.js';
import { fineMoeModel } from '../../helpers/models.js';

/** A small fine-grained model with experts: 4 layers, width 2048, 64 experts of 512, top 6. */
const FINE_MOE = fineMoeModel(4);

function scenario(parallel: Record<string, unknown>, nodes = 4) {
  return scenarioOf({
    name: 'combined',
    cluster: { preset: 'hgx-h800', nodes },
    model: FINE_MOE,
    training: { globalBatch: 128, microBatch: 1, seqLen: 4096 },
    parallel: { zero: 1, ...parallel },
  });
}

const text = (u: ReturnType<typeof combinedUnits>[number]) =>
  'op' in u
    ? `${u.op.kind}${u.op.microBatch}`
    : `${u.backward.kind}${u.backward.microBatch}+${u.forward.kind}${u.forward.microBatch}`;

describe('combined 1F1B (parallel.moeOverlap)', () => {
  it(
    'pairs each backward with the next forward without a ' +
      'pipeline (and would pair each steady-state forward in 1F1B)',
    () => {
      expect(combinedUnits(stageSchedule('1f1b', 1, 0, 3), 1).map(text)).toEqual(['F0', 'B0+F1', 'B1+F2', 'B2']);
      // Stage 0 of 2 warms up with one forward; then forward i + 1 runs with backward i.
      expect(combinedUnits(stageSchedule('1f1b', 2, 0, 4), 2).map(text)).toEqual([
        'F0',
        'B0+F1',
        'B1+F2',
        'B2+F3',
        'B3',
      ]);
      // The last stage runs the forward and backward of one micro-batch back to back: nothing pairs.
      expect(combinedUnits(stageSchedule('1f1b', 2, 1, 4), 2).map(text)).toEqual([
        'F0',
        'B0',
        'F1',
        'B1',
        'F2',
        'B2',
        'F3',
        'B3',
      ]);
    },
  );

  it('splits interleaved pairs that would leave stages waiting on each other, and keeps most of the rest', () => {
    const pairs = (pp: number, m: number, safe: boolean) => {
      const schedules = Array.from({ length: pp }, (_, s) => stageSchedule('interleaved', pp, s, m, 2));
      const units = safe ? deadlockFreeUnits(schedules, pp, 2 * pp) : schedules.map((ops) => combinedUnits(ops, pp));
      return units.flat().filter((u) => !('op' in u)).length;
    };
    // One round (m = pp): some pairs the stages would form wait, through the other stages, on themselves (the step
    // program then never finishes: 'run' below simulates this case).
    expect(pairs(4, 4, true)).toBeLessThan(pairs(4, 4, false));
    // Three rounds: most pairs stand.
    expect(pairs(4, 12, true)).toBeGreaterThan(0.5 * pairs(4, 12, false));
  });

  it('runs the two passes of a step by turns at their all-to-alls, which go to the TP stream', () => {
    const plan = compileStep(scenario({ ep: 32, moeOverlap: true }));
    const compute = plan.program.tasks.filter((t) => t.ranks[0] === 0 && t.stream === 'compute').map((t) => t.label);
    // In the step of backward 0 with forward 1, the compute stream switches between them more than once a layer.
    const step = compute.filter((l) => / mb[01]$/.test(l) && !(l.startsWith('fwd') && l.endsWith('mb0')));
    let switches = 0;
    for (let i = 1; i < step.length; i++) if (step[i].slice(0, 3) !== step[i - 1].slice(0, 3)) switches++;
    expect(switches).toBeGreaterThanOrEqual(2 * FINE_MOE.layers);
    const exchanges = plan.program.tasks.filter((t) => t.kind === 'ep-alltoall');
    expect(exchanges.length).toBeGreaterThan(0);
    expect(exchanges.every((t) => t.stream === 'tp')).toBe(true);
  });

  it('puts the experts’ TP gathers on the TP stream with their all-to-alls, each after the one it follows', () => {
    // tp 2 with sequence parallelism: the experts keep tp 2, so the dispatched tokens are
    // all-gathered after the dispatch.
    const plan = compileStep(scenario({ tp: 2, sequenceParallel: true, ep: 16, moeOverlap: true }));
    const onTp = plan.program.tasks.filter((t) => t.ranks[0] === 0 && t.stream === 'tp').map((t) => t.label);
    const gathers = onTp.filter((l) => l.startsWith('TP all-gather dispatched tokens'));
    expect(gathers.length).toBeGreaterThan(0);
    // In stream order each gather comes right after a dispatch, and each reduce-scatter right before a combine.
    onTp.forEach((l, i) => {
      if (l.startsWith('TP all-gather dispatched tokens')) expect(onTp[i - 1]).toMatch(/^EP all-to-all dispatch/);
      if (l.startsWith('TP reduce-scatter expert outputs')) expect(onTp[i + 1]).toMatch(/^EP all-to-all combine/);
    });
  });

  it('hides all-to-all time behind compute: faster, yet no faster than the busier of compute and exchanges', () => {
    for (const parallel of [{ ep: 32 }, { ep: 16 }]) {
      const plain = simulateStep(scenario(parallel)).result;
      const combined = simulateStep(scenario({ ...parallel, moeOverlap: true })).result;
      expect(combined.stepTimeS).toBeLessThan(plain.stepTimeS);
      expect(combined.breakdown.exposedCommS).toBeLessThan(plain.breakdown.exposedCommS);
      // Every compute task still runs, one at a time on its stream.
      expect(combined.breakdown.computeS).toBeCloseTo(plain.breakdown.computeS, 6);
      expect(combined.stepTimeS).toBeGreaterThanOrEqual(combined.breakdown.computeS);
    }
  });

  it(
    'pairs passes over an interleaved pipeline as far as ' + 'no stage then waits for ever, and hides comm there too',
    () => {
      // One round of micro-batches (m = pp) leaves no pair whose inputs do not wait on each other; more rounds do.
      const tiny = { ...FINE_MOE, layers: 16, hidden: 1024, heads: 8, kvHeads: 8, ffnHidden: 4096 };
      const run = (pp: number, m: number, moeOverlap: boolean) =>
        simulateStep(
          scenarioOf({
            name: 'combined vpp',
            cluster: { preset: 'hgx-h800', nodes: 2 },
            model: { ...tiny, moe: { experts: 16, topK: 2, expertFfnHidden: 512 } },
            training: { globalBatch: (m * 16) / pp, microBatch: 1, seqLen: 1024 },
            parallel: { zero: 1, pp, ep: 2, schedule: 'interleaved', virtualStages: 2, moeOverlap },
          }),
        ).result.stepTimeS;
      for (const [pp, m] of [
        [4, 4],
        [8, 8],
        [4, 8],
      ])
        expect(run(pp, m, true)).toBeGreaterThan(0);
      expect(run(4, 12, true)).toBeLessThan(run(4, 12, false));
    },
  );

  it('keeps two micro-batches in flight without a pipeline, where 1F1B keeps one', () => {
    const plain = stageMemories(scenario({ ep: 32 }))[0];
    const combined = stageMemories(scenario({ ep: 32, moeOverlap: true }))[0];
    expect(plain.passesInFlight).toBe(1);
    expect(combined.passesInFlight).toBe(2);
    expect(combined.activationsBytes).toBeGreaterThan(plain.activationsBytes);
  });

  it(
    'is refused without all-to-alls or on the interleaved schedule, ' + 'and imported from Megatron without a pipeline',
    () => {
      expect(() => scenario({ ep: 1, moeOverlap: true })).toThrow(/parallel\.moeOverlap.*there are none \(ep 1\)/);
      expect(() => scenario({ ep: 16, pp: 2, moeOverlap: true })).toThrow(
        /parallel\.schedule.*over a pipeline needs the interleaved schedule/,
      );
      const flags = `--num-layers 4 --hidden-size 2048 --num-attention-heads 16 --swiglu --num-experts 64
      --expert-model-parallel-size 8 --moe-token-dispatcher-type alltoall --moe-grouped-gemm
      --overlap-moe-expert-parallel-comm`;
      const fields = Object.fromEntries(importMegatronArgs(flags).fields.map((f) => [f.path, f.value]));
      expect(fields['parallel.moeOverlap']).toBe(true);
      expect(() => importMegatronArgs(`${flags} --pipeline-model-parallel-size 2`)).toThrow(/no virtual pipeline/);
      const virtual = importMegatronArgs(
        `${flags} --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 1`,
      );
      expect(virtual.fields.find((f) => f.path === 'parallel.moeOverlap')?.value).toBe(true);
    },
  );
});
