import { afterEach, describe, expect, it, vi } from 'vitest';
import { PLAIN_PROGRESS_EVERY_MS, progressReporter } from '../../src/cli/calibrateCommand.js';

describe('progress without a terminal', () => {
  afterEach(() => vi.useRealTimers());

  it('prints a line per group, and within a long group one at least every 30 s', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const p = progressReporter({ out: () => {}, err: (t) => lines.push(t) }, 'calibrate');
    p.update(0, 100, 'gemm/fp32/a', 'gemm fp32');
    p.update(1, 100, 'gemm/fp32/b', 'gemm fp32');
    expect(lines).toEqual(['calibrate: gemm fp32 (0/100 done)']);
    vi.advanceTimersByTime(PLAIN_PROGRESS_EVERY_MS);
    p.update(40, 100, 'gemm/fp32/c', 'gemm fp32');
    p.update(41, 100, 'gemm/fp32/d', 'gemm fp32');
    expect(lines.slice(1)).toEqual(['calibrate: 40/100 done, next gemm/fp32/c']);
    p.update(90, 100, 'copy/h2d', 'copy h2d');
    expect(lines.slice(2)).toEqual(['calibrate: copy h2d (90/100 done)']);
  });
});
