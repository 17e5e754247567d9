import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** scripts/measure-host-op.py: the host cost of an eager PyTorch call (training.hostOpUs), for the training host. */
const run = (...args: string[]) =>
  spawnSync('python3', ['scripts/measure-host-op.py', ...args], { encoding: 'utf8', timeout: 120_000 });

describe('scripts/measure-host-op.py', () => {
  it('checks its arguments before anything else', () => {
    const r = run('--calls', '5');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--calls must be at least 10/);
    expect(run('--help').stdout).toMatch(/training\.hostOpUs/);
  });

  it('measures on the CPU where PyTorch is installed, and otherwise says what is missing', () => {
    const r = run('--device', 'cpu', '--calls', '100', '--repeats', '2', '--json');
    if (r.status === 0) {
      const out = JSON.parse(r.stdout);
      expect(out.device).toBe('cpu');
      expect(out.hostOpUs).toBeGreaterThan(0);
      for (const k of ['addmmAutogradUs', 'linearModuleUs', 'backwardPerNodeUs'])
        expect(typeof out.context[k]).toBe('number');
    } else {
      expect(r.stderr).toMatch(/PyTorch is not installed for this Python/);
    }
  });
});
