import { describe, expect, it } from 'vitest';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { planSeries, scaleSweep } from '../../src/sweep/scale.js';
import { sweepGrid } from '../../src/sweep/grid.js';
import { runPoints, threadsAvailable } from '../../src/sweep/pool.js';
import { runScaleSweep } from '../../src/sweep/sweep.js';

const BERT = 'scenarios/bert-large-ddp-2node.yaml';

describe('running sweep points', () => {
  it('runs in this thread from TypeScript sources (no compiled worker beside them), whatever --jobs says', async () => {
    expect(threadsAvailable()).toBe(false);
    const plan = planSeries(loadScenarioFile(BERT), 'weak');
    const done: number[] = [];
    const r = await runPoints([plan], sweepGrid(1, [4, 12]), { jobs: 4, onPoint: (p) => done.push(p.gpus) });
    expect(r.workers).toBe(0);
    expect(done).toEqual([4, 12]);
    expect(r.rows.map((row) => row.status)).toEqual(['ok', 'infeasible']);
  });

  it(
    'gives the same series as the one-scenario-at-a-time sweep, ' + 'and keeps the largest run for the report',
    async () => {
      const file = loadScenarioFile(BERT);
      const serial = scaleSweep(file, [4, 8, 12, 16], { mode: 'strong' });
      const { series } = await runScaleSweep([planSeries(file, 'strong')], [4, 8, 12, 16], {
        jobs: 2,
        keepLargest: true,
      });
      const { largest, ...rest } = series[0];
      const { largest: serialLargest, ...serialRest } = serial;
      expect(rest).toEqual(serialRest);
      expect(largest?.gpus).toBe(16);
      expect(largest?.run.result).toEqual(serialLargest?.run.result);
    },
  );
});
