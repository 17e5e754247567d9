import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * The GPU-side measurement scripts run after `validate` on a GPU host (scripts/gpu/run-calibration.sh): their
 * argument checks, and a small CPU run where a Python with PyTorch is found here (Debian's python3-torch is at
 * /usr/bin/python3 on the development image); otherwise the message that says what is missing.
 */
const withTorch = ['python3', '/usr/bin/python3'].find(
  (py) => spawnSync(py, ['-c', 'import torch'], { timeout: 60_000 }).status === 0,
);
const run = (script: string, args: string[], python = withTorch ?? 'python3') =>
  spawnSync(python, [`scripts/${script}`, ...args], { encoding: 'utf8', timeout: 120_000 });

const scripts: {
  script: string;
  bad: string[];
  error: RegExp;
  small: string[];
  check: (out: { device: string; cases: Record<string, number | string>[]; errors: unknown[] }) => void;
}[] = [
  {
    script: 'measure-attention.py',
    bad: ['--seqs', '2048,x'],
    error: /--seqs takes integers separated by commas/,
    small: ['--seqs', '64,128', '--tokens', '256', '--hidden', '128', '--head-dim', '64', '--repeats', '1'],
    check: (out) => {
      expect(out.cases.map((c) => c.seq)).toEqual([64, 128]);
      for (const c of out.cases) expect(Number(c.forwardS)).toBeGreaterThan(0);
    },
  },
  {
    script: 'measure-softmax-fallback.py',
    bad: ['--shapes', '2x'],
    error: /--shapes takes \(b\*np\)x\(s\) pairs/,
    small: ['--shapes', '2x64,3x32', '--iters', '1', '--repeats', '1'],
    check: (out) => {
      expect(out.cases.map((c) => `${c.batchHeads}x${c.seq}`)).toEqual(['2x64', '3x32']);
      for (const c of out.cases) expect(Number(c.elements)).toBe(Number(c.batchHeads) * Number(c.seq) ** 2);
    },
  },
  {
    script: 'measure-llama-layer.py',
    bad: ['--layers', '0'],
    error: /--layers and --repeats must be at least 1/,
    small: ['--layers', '1', '--repeats', '1', '--sustain', '2'],
    check: (out) => {
      expect(out.cases.map((c) => c.name)).toEqual(['tiny']);
      expect(Number(out.cases[0].backwardSPerLayer)).toBeGreaterThan(0);
      expect(out.cases[0].sustainedIterations).toBe(2);
      expect(Number(out.cases[0].sustainedSPerLayer)).toBeGreaterThan(0);
    },
  },
  {
    script: 'measure-elementwise.py',
    bad: ['--elements', '10'],
    error: /--elements takes whole numbers of at least 1024/,
    small: ['--elements', '4096', '--repeats', '1', '--inner', '1'],
    check: (out) => {
      expect(out.cases.map((c) => c.op)).toContain('cast to fp32');
      for (const c of out.cases) expect(Number(c.GBps)).toBeGreaterThan(0);
    },
  },
  {
    script: 'measure-sustained-gemm.py',
    bad: ['--seconds', '0'],
    error: /--seconds and --window-ms above 0/,
    small: ['--size', '128', '--seconds', '0.3', '--window-ms', '50'],
    check: (out) => {
      const r = out as unknown as {
        windows: number;
        tflopsByWindow: number[];
        sustainedOverBurst: number;
        burstTflops: number;
      };
      expect(r.windows).toBe(6);
      expect(r.tflopsByWindow).toHaveLength(6);
      expect(r.burstTflops).toBe(Math.max(...r.tflopsByWindow)); // all windows fall in the first two seconds
      expect(r.sustainedOverBurst).toBeGreaterThan(0);
      expect(r.sustainedOverBurst).toBeLessThanOrEqual(1);
    },
  },
];

describe('the GPU-side measurement scripts', () => {
  for (const s of scripts) {
    it(`${s.script}: refuses bad arguments with exit status 2 and says what is allowed`, () => {
      const r = run(s.script, s.bad);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(s.error);
    });

    it(`${s.script}: a small CPU run prints one JSON object${withTorch ? '' : ' (no PyTorch here: says so)'}`, () => {
      const r = run(s.script, ['--device', 'cpu', '--json', ...s.small]);
      if (!withTorch) {
        expect(r.stderr).toMatch(/PyTorch is not installed for this Python/);
        return;
      }
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.device).toBe('cpu');
      expect(out.errors).toEqual([]);
      s.check(out);
    });
  }
});
