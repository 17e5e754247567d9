import { describe, expect, it } from 'vitest';
import { GROWTH_CASES, logLogSlope } from '../../src/bench/growth.js';
import { resolveScenario } from '../../src/scenario/resolve.js';

describe('bench growth cases', () => {
  it('the log-log slope recovers the exponent of a power law and is NaN for one point', () => {
    const pts = [64, 256, 1024, 4096].map((x) => ({ x, y: 3 * x ** 1.5 }));
    expect(logLogSlope(pts)).toBeCloseTo(1.5, 12);
    expect(logLogSlope(pts.map((p) => ({ x: p.x, y: 7 })))).toBeCloseTo(0, 12);
    expect(logLogSlope([{ x: 1, y: 2 }])).toBeNaN();
  });

  it('every growth case is a valid scenario with the GPU count and micro-batches its series says', () => {
    for (const [name, c] of Object.entries(GROWTH_CASES)) {
      const s = resolveScenario(c.raw, name, '.');
      const gpus = s.cluster.nodes * s.cluster.node.gpusPerNode;
      const dp = gpus / (s.parallel.tp * s.parallel.pp);
      const microBatches = s.training.globalBatch / (dp * s.training.microBatch);
      if (c.series === 'gpus') expect(gpus, name).toBe(c.x);
      else expect(microBatches, name).toBe(c.x);
    }
  });
});
