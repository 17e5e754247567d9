import { describe, expect, it } from 'vitest';
import { Program } from '../../src/sim/program/types.js';
import type { Trace } from '../../src/sim/program/trace.js';
import {
  compactRanks,
  defaultRanks,
  parseRankList,
  parseStreamList,
  pipelineStageRanks,
  RankNotSimulatedError,
  RankSelectionError,
  simulatedRanks,
} from '../../src/report/ranks.js';

/** A trace where every rank computes `busy[r]` ns; only `simulated` ranks (default all) have work. */
function traceWithBusy(busy: number[], simulated?: number[]): Trace {
  const program = new Program(busy.length, simulated);
  busy.forEach((ns, r) => {
    if (!simulated || simulated.includes(r)) program.local(r, 'compute', 'forward', 'f', ns);
  });
  const endNs = Float64Array.from(program.tasks.map((t) => busy[t.ranks[0]]));
  return { program, startNs: new Float64Array(endNs.length), endNs, makespanNs: Math.max(...busy) };
}

describe('rank selection', () => {
  it('reads ranks and ranges into sorted distinct ranks', () => {
    expect(parseRankList('0-3', 16)).toEqual([0, 1, 2, 3]);
    expect(parseRankList('8, 0,2-3,3', 16)).toEqual([0, 2, 3, 8]);
  });

  it('rejects ranks that do not exist, backwards ranges and words', () => {
    expect(() => parseRankList('0-16', 16)).toThrow(/rank 16 does not exist: this run has ranks 0-15/);
    expect(() => parseRankList('5-2', 16)).toThrow(RankSelectionError);
    expect(() => parseRankList('all', 16)).toThrow(/not a rank or a range/);
  });

  it('reads streams in their usual order and rejects unknown ones', () => {
    expect(parseStreamList('comm,compute')).toEqual(['compute', 'comm']);
    expect(() => parseStreamList('gpu')).toThrow(/unknown stream 'gpu'/);
  });

  it('defaults to rank 0, the slowest rank and the first rank of the last node', () => {
    const busy = Array.from({ length: 32 }, (_, r) => (r === 13 ? 120 : 100));
    expect(defaultRanks({ trace: traceWithBusy(busy), gpusPerNode: 8 })).toEqual([0, 13, 24]);
  });

  it('adds nothing for a single node where every rank is equally fast', () => {
    expect(defaultRanks({ trace: traceWithBusy([5, 5, 5, 5]), gpusPerNode: 8 })).toEqual([0]);
  });

  it('adds the first rank of each pipeline stage', () => {
    const stages = pipelineStageRanks({ tp: 2, pp: 4, dp: 2 });
    expect(stages).toEqual([[0], [4], [8], [12]]);
    expect(pipelineStageRanks({ tp: 2, pp: 2, dp: 2, placement: 'tp-pp-dp' })).toEqual([[0], [2]]);
    expect(pipelineStageRanks({ dp: 16 })).toEqual([]);
    expect(defaultRanks({ trace: traceWithBusy(new Array(16).fill(1)), gpusPerNode: 8, stages })).toEqual([
      0, 4, 8, 12,
    ]);
  });

  it('chooses only among simulated ranks when the simulator mirrors the others', () => {
    // Two replicas of a 4-stage pipeline over 2 nodes of 4 GPUs; only replica 0 (ranks 0-3) is simulated.
    const trace = traceWithBusy(new Array(8).fill(10), [0, 1, 2, 3]);
    expect(simulatedRanks(trace)).toEqual([0, 1, 2, 3]);
    expect(defaultRanks({ trace, gpusPerNode: 4 })).toEqual([0]);
    expect(defaultRanks({ trace, gpusPerNode: 2, stages: [[0], [1], [2], [3]] })).toEqual([0, 1, 2, 3]);
    // Across nodes, the farthest simulated node's first rank is added.
    expect(defaultRanks({ trace, gpusPerNode: 2 })).toEqual([0, 2]);
    expect(() => parseRankList('0,5', 8, simulatedRanks(trace))).toThrow(RankNotSimulatedError);
    expect(() => parseRankList('0,5', 8, simulatedRanks(trace))).toThrow(
      /rank 5 was not simulated: this run simulated ranks 0-3/,
    );
  });

  it('writes rank sets compactly', () => {
    expect(compactRanks([3, 0, 1, 2, 8, 10, 11])).toBe('0-3,8,10-11');
  });
});
