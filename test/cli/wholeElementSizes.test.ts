import { describe, expect, it } from 'vitest';
import { countColumn, wholeElementSizes } from '../../src/cli/collectiveCommand.js';

describe(
  'collective sizes as nccl-tests runs them (count = size / 4, ' + 'per rank for all_gather and reduce_scatter)',
  () => {
    it(
      'cuts each size to whole floats, and for all_gather to ' +
        'whole floats per rank, so the printed size is what moves',
      () => {
        expect(wholeElementSizes('all_reduce', [7, 8, 1023], 8)).toEqual([4, 8, 1020]);
        // 8 ranks: a multiple of 32 B; 8 and 16 B give each rank no float and are dropped.
        expect(wholeElementSizes('all_gather', [8, 16, 32, 100], 8)).toEqual([32, 96]);
        expect(wholeElementSizes('reduce_scatter', [48], 3)).toEqual([48]);
      },
    );

    it('keeps a size that the cut makes repeat once', () => {
      expect(wholeElementSizes('all_gather', [64, 65, 70, 96], 8)).toEqual([64, 96]);
    });

    it('agrees with the count column: size = count × 4, × ranks where the count is per rank', () => {
      for (const [op, ranks] of [
        ['all_reduce', 8],
        ['all_gather', 8],
        ['reduce_scatter', 6],
        ['broadcast', 4],
      ] as const) {
        for (const b of wholeElementSizes(op, [5, 37, 1000, 4099], ranks)) {
          const perRank = op === 'all_gather' || op === 'reduce_scatter';
          expect(countColumn(op, b, ranks) * 4 * (perRank ? ranks : 1)).toBe(b);
        }
      }
    });
  },
);
