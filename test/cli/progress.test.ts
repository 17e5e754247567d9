import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  onInterrupt,
  PLAIN_PROGRESS_EVERY_MS,
  progressReporter,
  REPEATED_SIGINT_MS,
} from '../../src/cli/calibrateCommand.js';
import { plainSweepProgress } from '../../src/cli/sweepProgress.js';

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

  it('a sweep says when its first point is done, then at most once every 30 s, counting every point', () => {
    let nowMs = 1_000_000;
    const lines: string[] = [];
    const p = plainSweepProgress({ out: () => {}, err: (t) => lines.push(t) }, 'scale', 10, () => nowMs);
    nowMs += 4_200;
    p.tick('a.yaml at 8 GPUs');
    nowMs += 4_000;
    p.tick('a.yaml at 16 GPUs');
    expect(lines).toEqual(['scale: 1/10 runs done in 4 s (last: a.yaml at 8 GPUs)']);
    nowMs += PLAIN_PROGRESS_EVERY_MS - 4_000;
    p.tick('a.yaml at 32 GPUs');
    expect(lines.slice(1)).toEqual(['scale: 3/10 runs done in 34 s (last: a.yaml at 32 GPUs)']);
    // The end says the final count, once, when the last line did not.
    nowMs += 1_000;
    p.tick('a.yaml at 64 GPUs');
    p.stop();
    expect(lines.slice(2)).toEqual(['scale: 4/10 runs done in 35 s (last: a.yaml at 64 GPUs)']);
    p.stop();
    expect(lines).toHaveLength(3);
  });
});

describe('Ctrl-C during calibrate or validate', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    delete process.env.CLUSTERSIM_WRAPPED;
  });

  const run = (wrapped: boolean) => {
    if (wrapped) process.env.CLUSTERSIM_WRAPPED = '1';
    vi.useFakeTimers();
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const lines: string[] = [];
    const controller = new AbortController();
    const remove = onInterrupt({ out: () => {}, err: (t) => lines.push(t) }, controller, 'calibrate');
    return { exit, lines, controller, remove };
  };

  it('under the wrapper takes the copy passed on a moment later as the same Ctrl-C, and a second press as quit', () => {
    const { exit, lines, controller, remove } = run(true);
    process.emit('SIGINT');
    vi.advanceTimersByTime(5);
    process.emit('SIGINT'); // the wrapper's copy of the same press
    expect(controller.signal.aborted).toBe(true);
    expect(lines).toHaveLength(1);
    expect(exit).not.toHaveBeenCalled();
    vi.advanceTimersByTime(REPEATED_SIGINT_MS + 100);
    process.emit('SIGINT'); // a second press
    expect(exit).toHaveBeenCalledWith(130);
    remove();
  });

  it('without the wrapper quits on the second SIGINT however soon it comes', () => {
    const { exit, remove } = run(false);
    process.emit('SIGINT');
    process.emit('SIGINT');
    expect(exit).toHaveBeenCalledWith(130);
    remove();
  });
});
