import { describe, expect, it } from 'vitest';
import { paretoFront, renderPlanChart } from '../../src/report/planChart.js';

describe('the plan chart', () => {
  it('finds the Pareto front: the points that nothing both faster and smaller beats', () => {
    const points = [
      { stepS: 5, memoryBytes: 10 }, // the smallest: on the front
      { stepS: 6, memoryBytes: 20 }, // bigger and slower than the first: off
      { stepS: 4, memoryBytes: 30 }, // faster than all smaller ones: on
      { stepS: 4, memoryBytes: 40 }, // as fast as a smaller one: off
      { stepS: 3, memoryBytes: 40 }, // on
      { stepS: 5, memoryBytes: 10 }, // the same as the first: off (the first comes first)
    ];
    expect(paretoFront(points)).toEqual([0, 2, 4]);
    expect(paretoFront([])).toEqual([]);
  });

  it('draws every point, marks the front and numbers the simulated best', () => {
    const gib = 2 ** 30;
    const svg = renderPlanChart({
      title: 't',
      capacityBytes: 80 * gib,
      points: [
        { label: 'a', stepS: 2, memoryBytes: 10 * gib, rank: 1 },
        { label: 'b', stepS: 3, memoryBytes: 5 * gib },
        { label: 'c', stepS: 4, memoryBytes: 20 * gib, rank: 2 },
      ],
    });
    expect(svg).toContain('data-points="3"');
    expect(svg.match(/<circle class="point[^"]*"/g)).toHaveLength(3);
    expect(svg.match(/class="point front/g)).toHaveLength(2);
    expect(svg.match(/class="rank"/g)).toHaveLength(2);
    expect(svg).toContain('>#1<');
  });
});
