import { describe, expect, it } from 'vitest';
import {
  parseShard,
  shardOf,
  shardPoints,
  ShardSyntaxError,
  shardText,
  sweepGrid,
  sweepId,
} from '../../src/sweep/grid.js';

describe('sweep grid and shards', () => {
  it('numbers the points in table order: scenario by scenario, GPU counts ascending', () => {
    expect(sweepGrid(2, [8, 16, 32])).toEqual([
      { index: 0, series: 0, gpus: 8 },
      { index: 1, series: 0, gpus: 16 },
      { index: 2, series: 0, gpus: 32 },
      { index: 3, series: 1, gpus: 8 },
      { index: 4, series: 1, gpus: 16 },
      { index: 5, series: 1, gpus: 32 },
    ]);
  });

  it('deals the points round-robin, so the parts are disjoint and together hold every point exactly once', () => {
    for (const [series, counts] of [
      [1, 1],
      [1, 11],
      [3, 7],
      [2, 4],
    ] as const) {
      const grid = sweepGrid(
        series,
        Array.from({ length: counts }, (_, i) => 2 ** i),
      );
      for (const n of [1, 2, 3, 5, 8, 40]) {
        const seen = new Map<number, number>();
        for (let i = 1; i <= n; i++) {
          const part = shardPoints(grid, { index: i, count: n });
          expect(part.every((p) => shardOf(p.index, n) === i)).toBe(true);
          // Round-robin: part i holds points i-1, i-1+n, ...
          expect(part.map((p) => p.index)).toEqual(grid.filter((p) => p.index % n === i - 1).map((p) => p.index));
          for (const p of part) seen.set(p.index, (seen.get(p.index) ?? 0) + 1);
        }
        expect([...seen.keys()].sort((a, b) => a - b)).toEqual(grid.map((p) => p.index));
        expect([...seen.values()].every((c) => c === 1)).toBe(true);
      }
    }
  });

  it('reads i/N with parts counted from 1, and round-trips it', () => {
    expect(parseShard('1/1')).toEqual({ index: 1, count: 1 });
    expect(parseShard(' 3 / 8 ')).toEqual({ index: 3, count: 8 });
    expect(parseShard('8/8')).toEqual({ index: 8, count: 8 });
    expect(shardText(parseShard('2/5'))).toBe('2/5');
  });

  it('rejects 0/N, i > N, N = 0 and anything that is not i/N, saying what is expected', () => {
    expect(() => parseShard('0/4')).toThrow(/parts count from 1 \(1\/4 … 4\/4\).*JOB_COMPLETION_INDEX/);
    expect(() => parseShard('5/4')).toThrow(/part 5 does not exist, there are only 4/);
    expect(() => parseShard('3/0')).toThrow(/N, the number of parts, must be at least 1/);
    for (const bad of ['', 'abc', '1', '1/', '/4', '1/2/3', '-1/4', '1.5/4', '2of4']) {
      expect(() => parseShard(bad)).toThrow(ShardSyntaxError);
      expect(() => parseShard(bad)).toThrow(/is not i\/N/);
    }
  });

  it('fingerprints a sweep by its scenarios, GPU counts and mode', () => {
    const a = [{ source: 'a.yaml', raw: { seed: 1 } }];
    const id = sweepId(a, [8, 16], 'weak');
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(sweepId([{ source: 'a.yaml', raw: { seed: 1 } }], [8, 16], 'weak')).toBe(id);
    expect(sweepId(a, [8, 16], 'strong')).not.toBe(id);
    expect(sweepId(a, [8, 32], 'weak')).not.toBe(id);
    expect(sweepId([{ source: 'a.yaml', raw: { seed: 2 } }], [8, 16], 'weak')).not.toBe(id);
    expect(sweepId([{ source: 'b.yaml', raw: { seed: 1 } }], [8, 16], 'weak')).not.toBe(id);
  });
});
