import { describe, expect, it } from 'vitest';
import { stepTasks } from '../../src/validation/stepSets.js';

describe('the DeepSpeed-on-Azure ZeRO-3 set', () => {
  const tasks = stepTasks(['deepspeed-azure-zero3']);

  it('holds the 37 bars of Figure 5: 17 at sequence 512, 20 at 1024', () => {
    expect(tasks).toHaveLength(37);
    expect(tasks.filter((t) => t.label.includes('seq 512 '))).toHaveLength(17);
    expect(tasks.filter((t) => t.label.includes('seq 1024 '))).toHaveLength(20);
  });

  it("turns the stated 204.49 TFLOP/s (256 GPUs, micro-batch 32, sequence 512) into a step by Megatron's count", () => {
    const row = tasks.find((t) => t.label === '175B seq 512 on 256 A100 mb32')!;
    // 96·B·s·l·h²·(1 + s/6h + V/16lh), B = 32 × 256, V = 50,304: 2.3019e19 FLOPs over 256 GPUs at 204.49 TFLOP/s.
    const flops = 96 * 8192 * 512 * 96 * 12288 ** 2 * (1 + 512 / (6 * 12288) + 50304 / (16 * 96 * 12288));
    expect(row.measuredS).toBeCloseTo(flops / (204.49e12 * 256), 6);
    expect(row.measuredS).toBeGreaterThan(112);
    expect(row.measuredS).toBeLessThan(113);
  });

  it('runs each row as ZeRO-3 over every GPU the way DeepSpeed does, with gradient accumulation 1', () => {
    for (const t of tasks) {
      const p = t.raw.parallel as { tp: number; pp: number; dp: number; zero: number; zeroConfig: { stage3: string } };
      const tr = t.raw.training as { globalBatch: number; microBatch: number };
      expect([p.tp, p.pp, p.zero, p.zeroConfig.stage3]).toEqual([1, 1, 3, 'deepspeed']);
      expect(p.dp).toBe(8 * (t.raw.cluster as { nodes: number }).nodes);
      expect(tr.globalBatch).toBe(tr.microBatch * p.dp);
    }
  });
});
