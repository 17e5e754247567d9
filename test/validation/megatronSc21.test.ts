import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveScenario } from '../../src/scenario/resolve.js';
import {
  megatronFlopsPerIteration,
  megatronSc21Scenario,
  parseMegatronSc21Csv,
  virtualStagesFor,
} from '../../src/validation/megatronSc21.js';

const csv = readFileSync(fileURLToPath(new URL('./megatron-sc21-table1.csv', import.meta.url)), 'utf8');

describe('Megatron-LM SC21 Table 1 set', () => {
  it("computes the paper's Eq. 3 FLOPs per iteration (1.7B row, hand-computed)", () => {
    // B 512, s 2048, l 24, h 2304, V 51200:
    // 1 + s/(6h) + V/(16lh) = 1 + 2048/13824 + 51200/884736 = 1 + 4/27 + 25/432 = 521/432, so
    // F = 96·512·2048·24·2304²·521/432 = 15,466,830,067,924,992 (exact: 2304² = 2^16·81 is divisible by 27).
    const f = megatronFlopsPerIteration(512, 2048, 24, 2304, 51200);
    expect(f / 15_466_830_067_924_992).toBeCloseTo(1, 12);
    // At the published 137 TFLOP/s on 32 GPUs that is a 3.528 s iteration.
    expect(f / (137e12 * 32)).toBeCloseTo(3.528, 3);
  });

  it('parses the data file into the ten rows of Table 1 with its source line', () => {
    const t = parseMegatronSc21Csv(csv);
    expect(t.source.some((l) => l.startsWith('source:') && l.includes('2104.04473') && l.includes('Table 1'))).toBe(
      true,
    );
    expect(
      t.source.some(
        (l) => l.includes('SotaroKaneda/MLCarbon') && l.includes('69070b28de401b6800d30f435db32996473560e2'),
      ),
    ).toBe(true);
    expect(t.rows).toHaveLength(10);
    expect(t.rows.map((r) => r.gpus)).toEqual([32, 64, 128, 256, 512, 1024, 1536, 1920, 2520, 3072]);
    expect(t.rows[0]).toEqual({
      paramsB: 1.7,
      heads: 24,
      hidden: 2304,
      layers: 24,
      tp: 1,
      pp: 1,
      gpus: 32,
      batch: 512,
      tflopsPerGpu: 137,
      pctPeak: 44,
      aggregatePflops: 4.4,
    });
    expect(t.rows[9]).toEqual({
      paramsB: 1008,
      heads: 160,
      hidden: 25600,
      layers: 128,
      tp: 8,
      pp: 64,
      gpus: 3072,
      batch: 3072,
      tflopsPerGpu: 163,
      pctPeak: 52,
      aggregatePflops: 502,
    });
    // Internal consistency of the transcription: TFLOP/s per GPU × GPUs ≈ aggregate PFLOP/s (rounding of both).
    for (const r of t.rows)
      expect(Math.abs((r.tflopsPerGpu * r.gpus) / 1e3 - r.aggregatePflops) / r.aggregatePflops).toBeLessThan(0.01);
  });

  it('builds each scenario with dp = GPUs/(tp·pp) and a layer split the interleaved schedule accepts', () => {
    for (const r of parseMegatronSc21Csv(csv).rows) {
      const p = megatronSc21Scenario(r).parallel as { tp: number; pp: number; dp: number; virtualStages: number };
      expect(p.tp * p.pp * p.dp).toBe(r.gpus);
      const v = virtualStagesFor(r);
      expect(r.layers % (r.pp * v)).toBe(0);
      if (r.pp > 1) expect(v).toBeGreaterThanOrEqual(2);
      // And the scenario passes the same validation a user's file does.
      expect(() => resolveScenario(megatronSc21Scenario(r), 'megatron-sc21', '.')).not.toThrow();
    }
  });
});
