import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** scripts/measure-gemm-alignment.py: the misaligned LM-head slowdown by alignment, for the GPU host. */
const run = (...args: string[]) =>
  spawnSync('python3', ['scripts/measure-gemm-alignment.py', ...args], { encoding: 'utf8', timeout: 120_000 });

describe('scripts/measure-gemm-alignment.py', () => {
  it('checks its arguments before anything else', () => {
    const r = run('--tokens', '4');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--tokens and every --hidden must be at least 8/);
    expect(run('--help').stdout).toMatch(/MISALIGNED_GEMM_SLOWDOWN/);
  });

  it('runs a small check on the CPU where PyTorch is installed, and otherwise says what is missing', () => {
    const r = run('--device', 'cpu', '--tokens', '64', '--hidden', '32', '--scale', '64', '--repeats', '1', '--json');
    if (r.status === 0) {
      const out = JSON.parse(r.stdout);
      expect(out.device).toBe('cpu');
      // Four width groups (GPT-2's vocabulary over 1, 2, 4, 8 ranks), each an aligned width and three misaligned ones.
      expect(out.rows).toHaveLength(16);
      for (const row of out.rows) {
        expect(row.forwardUs).toBeGreaterThan(0);
        expect(row.width % row.alignElems).toBe(0);
      }
      expect(
        out.rows
          .filter((row: { width: number; alignedNeighbour: number }) => row.width === row.alignedNeighbour)
          .every((row: { slowdown: number }) => row.slowdown === 1),
      ).toBe(true);
    } else {
      expect(r.stderr).toMatch(/PyTorch is not installed for this Python/);
    }
  });
});
