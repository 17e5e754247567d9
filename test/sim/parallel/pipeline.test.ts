import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { peakInFlight, stageSchedule } from '../../../src/sim/parallel/schedules.js';
import { scenarioOf } from '../../helpers/scenario.js';
import { stageMemories } from '../../../src/sim/memory/stageMemory.js';
import { frameworkByName, type FrameworkName } from '../../../src/sim/workload/framework.js';

/**
 * A GPT whose embedding and head are negligible (vocab 128) with long compute per micro-batch, so stages
 * are equal and communication is small next to compute: the setting of the closed-form bubble.
 */
function pipeline(pp: number, microBatches: number, schedule = '1f1b', virtualStages = 1) {
  return scenarioOf({
    cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: pp, nicsPerNode: 1 } },
    model: { arch: 'gpt', layers: 8 * pp, hidden: 4096, heads: 32, seqLen: 2048, vocab: 128 },
    training: { globalBatch: microBatches * 8, microBatch: 8 },
    parallel: { pp, schedule, virtualStages },
  });
}

describe('pipeline schedules', () => {
  it('run every forward and backward of every micro-batch and chunk exactly once, forward before backward', () => {
    for (const [schedule, v] of [
      ['gpipe', 1],
      ['1f1b', 1],
      ['interleaved', 2],
      ['interleaved', 3],
    ] as const) {
      for (let s = 0; s < 4; s++) {
        const ops = stageSchedule(schedule, 4, s, 8, v);
        expect(ops.length).toBe(2 * 8 * v);
        const seen = new Set<string>();
        for (const op of ops) {
          const k = `${op.microBatch}/${op.chunk}`;
          if (op.kind === 'F') seen.add(k);
          else expect(seen.has(k)).toBe(true);
        }
        expect(seen.size).toBe(8 * v);
      }
    }
  });

  it('keep p − s micro-batches in flight on stage s with 1F1B and all m with GPipe', () => {
    for (let s = 0; s < 4; s++) {
      expect(peakInFlight(stageSchedule('1f1b', 4, s, 8))).toBe(4 - s);
      expect(peakInFlight(stageSchedule('gpipe', 4, s, 8))).toBe(8);
    }
  });

  it('keep (p−1)·2 + (v−1)·p + 1 chunk passes in flight on stage 0 when interleaved (Megatron warm-up)', () => {
    expect(peakInFlight(stageSchedule('interleaved', 4, 0, 8, 2))).toBe(3 * 2 + 1 * 4 + 1);
  });

  it(
    'cap the interleaved warm-up at every forward when m = p (Megatron-Core), ' + 'the last stage keeping (v−1)·p + 1',
    () => {
      // Stage s warms up min((p − s − 1)·2 + (v − 1)·p, m·v) forwards and holds one more: p = 4, v = 2, m = 4.
      const expected = [8, 8, 7, 5];
      for (let s = 0; s < 4; s++) expect(peakInFlight(stageSchedule('interleaved', 4, s, 4, 2))).toBe(expected[s]);
    },
  );

  it(
    'run every forward first when m = p under the older ' + 'rule (Megatron-LM before 4295be1a, Megatron-DeepSpeed)',
    () => {
      const older = { allWarmupWhenOneGroup: true };
      for (let s = 0; s < 4; s++) expect(peakInFlight(stageSchedule('interleaved', 4, s, 4, 2, older))).toBe(4 * 2);
      // With more micro-batches than stages the two rules agree.
      for (let s = 0; s < 4; s++)
        expect(stageSchedule('interleaved', 4, s, 8, 2, older)).toEqual(stageSchedule('interleaved', 4, s, 8, 2));
    },
  );

  it("follow the scenario's framework in the memory account: Megatron-DeepSpeed keeps the older rule", () => {
    // p = 4, v = 2, m = 4: the last stage holds (v − 1)·p + 1 = 5 passes today, all m·v = 8 under the older rule.
    const scenario = (framework: FrameworkName) => ({
      ...pipeline(4, 4, 'interleaved', 2),
      framework: frameworkByName(framework),
    });
    expect(stageMemories(scenario('none')).map((m) => m.passesInFlight)).toEqual([8, 8, 7, 5]);
    expect(stageMemories(scenario('megatron-deepspeed')).map((m) => m.passesInFlight)).toEqual([8, 8, 8, 8]);
  });
});

describe('pipeline bubble', () => {
  it('is (p−1)/(m+p−1) of the step for 1F1B with equal stages, within 2 points', () => {
    for (const [p, m] of [
      [4, 8],
      [4, 16],
      [2, 8],
    ]) {
      const r = simulateStep(pipeline(p, m)).result;
      const fraction = r.breakdown.bubbleS / r.stepTimeS;
      expect(Math.abs(fraction - (p - 1) / (m + p - 1))).toBeLessThan(0.02);
    }
  });

  it('is the same for GPipe as for 1F1B (1F1B saves memory, not time)', () => {
    const a = simulateStep(pipeline(4, 8, 'gpipe')).result;
    const b = simulateStep(pipeline(4, 8, '1f1b')).result;
    expect(Math.abs(a.stepTimeS - b.stepTimeS) / b.stepTimeS).toBeLessThan(0.01);
    expect(a.memory.perStage[0].activationsBytes).toBeGreaterThan(b.memory.perStage[0].activationsBytes);
  });

  it('shrinks with interleaving, by about the number of model chunks', () => {
    const plain = simulateStep(pipeline(4, 8, '1f1b')).result;
    const inter = simulateStep(pipeline(4, 8, 'interleaved', 2)).result;
    expect(inter.breakdown.bubbleS).toBeLessThan(plain.breakdown.bubbleS * 0.65);
    expect(inter.stepTimeS).toBeLessThan(plain.stepTimeS);
  });

  it('is reported as zero without a pipeline', () => {
    const r = simulateStep(pipeline(1, 4)).result;
    expect(r.breakdown.bubbleS).toBe(0);
  });

  it('splits the step into compute + exposed communication + bubble + idle', () => {
    const r = simulateStep(pipeline(4, 8)).result;
    const b = r.breakdown;
    expect(b.computeS + b.exposedCommS + b.bubbleS + b.idleS).toBeCloseTo(r.stepTimeS, 9);
  });
});

describe('pipeline transfers', () => {
  it('send activations forward and gradients back once per micro-batch and stage boundary', () => {
    const { plan } = simulateStep(pipeline(4, 8));
    const sends = plan.program.tasks.filter((t) => t.kind === 'pp-send');
    // 3 boundaries × 8 micro-batches × (activation + gradient).
    expect(sends.length).toBe(3 * 8 * 2);
    // s·b·h elements of 2 bytes.
    for (const t of sends) expect(t.collective!.bytes).toBe(2048 * 8 * 4096 * 2);
  });

  it('divide the activation transfer by t with tensor parallelism (scatter/gather optimisation)', () => {
    const raw = (parallel: Record<string, unknown>) => ({
      cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
      model: { arch: 'gpt', layers: 8, hidden: 4096, heads: 32, seqLen: 2048, vocab: 128 },
      training: { globalBatch: 4, microBatch: 1 },
      parallel: { tp: 4, pp: 2, ...parallel },
    });
    const s = scenarioOf(raw({}));
    const { plan } = simulateStep(s);
    const sends = plan.program.tasks.filter((t) => t.kind === 'pp-send');
    // 4 micro-batches × 2 directions × 4 TP ranks (symmetric mode simulates TP rank 0's; the other
    // ranks' sends run alongside as shadows).
    const transfers = sends.reduce((n, t) => n + 1 + (t.collective!.shadowGroups?.length ?? 0), 0);
    expect(transfers).toBe(4 * 2 * 4);
    for (const t of sends) expect(t.collective!.bytes).toBe((2048 * 4096 * 2) / 4);
    // Without sequence parallelism the receiving pass all-gathers the shares over its TP group first: one
    // all-gather of the whole b·s·h per received pass (stage 1's forwards, stage 0's backwards), after the sends.
    const gathers = plan.program.tasks.filter((t) => t.label.startsWith('all-gather received'));
    expect(gathers.length).toBe(4 * 2);
    for (const g of gathers) {
      expect(g.collective).toMatchObject({ op: 'all_gather', bytes: 2048 * 4096 * 2 });
      expect(g.collective!.group).toHaveLength(4);
      expect(g.deps.some((d) => plan.program.tasks[d].kind === 'pp-send')).toBe(true);
    }
    // With sequence parallelism the shards are what the next layer needs: no all-gather.
    const sp = simulateStep(scenarioOf(raw({ sequenceParallel: true }))).plan;
    expect(sp.program.tasks.some((t) => t.label.startsWith('all-gather received'))).toBe(false);
  });
});
