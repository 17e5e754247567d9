import { describe, expect, it } from 'vitest';
import { RankGroups } from '../../../src/sim/collectives/rankGroups.js';
import { Program } from '../../../src/sim/program/types.js';

describe('rank groups', () => {
  it('are one group, with one canonical array and one id, for arrays of the same ranks in the same order', () => {
    const g = new RankGroups();
    const a = [0, 8, 16];
    const b = [0, 8, 16];
    expect(g.canonical(b)).toBe(g.canonical(a));
    expect(g.idOf(b)).toBe(g.idOf(a));
    expect(g.size).toBe(1);
  });

  it('are different groups for the same ranks in another order, with dense ids in the order first seen', () => {
    const g = new RankGroups();
    expect(g.idOf([1, 2])).toBe(0);
    expect(g.idOf([2, 1])).toBe(1);
    expect(g.idOf([1, 2, 3])).toBe(2);
    expect(g.size).toBe(3);
  });

  it('intern lists of shadow groups by the groups they hold', () => {
    const g = new RankGroups();
    const first = g.canonicalList([
      [1, 2],
      [3, 4],
    ]);
    expect(
      g.canonicalList([
        [1, 2],
        [3, 4],
      ]),
    ).toBe(first);
    expect(
      g.canonicalList([
        [3, 4],
        [1, 2],
      ]),
    ).not.toBe(first);
  });
});

describe('a program', () => {
  it('gives a collective task the canonical group whichever array the caller built', () => {
    const p = new Program(4);
    const a = p.collective('dp-allreduce', 'a', { op: 'all_reduce', group: [0, 1, 2, 3], bytes: 8 });
    const b = p.collective('dp-allreduce', 'b', { op: 'all_reduce', group: [0, 1, 2, 3], bytes: 8 }, [a]);
    expect(p.tasks[b].collective!.group).toBe(p.tasks[a].collective!.group);
    expect(p.tasks[b].ranks).toBe(p.tasks[a].ranks);
    const t = p.transfer('pp-send', 's', [0, 1], 4, [b], 0, [[2, 3]]);
    const u = p.transfer('pp-send', 'u', [0, 1], 4, [t], 0, [[2, 3]]);
    expect(p.tasks[u].collective!.shadowGroups).toBe(p.tasks[t].collective!.shadowGroups);
  });
});
