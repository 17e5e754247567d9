import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_BIN, buildCli } from './builtCli.js';

beforeAll(buildCli, 300_000);

/**
 * bin/clustersim.js runs the CLI again in a child with a larger heap. The wrapper must not return before the child
 * has finished: Ctrl-C (SIGINT to the whole process group, as a terminal or `timeout -s INT` sends it) reaches the
 * child, which keeps what it measured, and the wrapper waits for it.
 */
describe('bin/clustersim.js', () => {
  it.each([
    ['to the process group (Ctrl-C, timeout -s INT)', true],
    ['to the wrapper alone (kill -INT <pid>)', false],
  ])(
    'on SIGINT %s returns only after the interrupted calibration has saved its log',
    async (_how, group) => {
      const dir = mkdtempSync(join(tmpdir(), 'wrapper-'));
      // Force the respawn whatever the machine's memory: an inherited small heap limit is always below the wanted one.
      const p = spawn(
        process.execPath,
        [
          '--max-old-space-size=256',
          BUILT_BIN,
          'calibrate',
          '--backend',
          'cpu',
          '--quick',
          '--out',
          join(dir, 'p.json'),
        ],
        {
          detached: true,
          env: { ...process.env, CLUSTERSIM_NO_RESPAWN: '' },
        },
      );
      let err = '';
      p.stderr.on('data', (d) => (err += d));
      // Interrupt once it has started measuring.
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (/\d+\/\d+/.test(err) || err.includes('done')) {
            clearInterval(poll);
            resolve();
          }
        }, 100);
      });
      // When the wrapper exits, nothing of its process group may still be running.
      const left = new Promise<string>((resolve) =>
        p.on('exit', () => resolve(spawnSync('pgrep', ['-g', String(p.pid)], { encoding: 'utf8' }).stdout.trim())),
      );
      const closed = new Promise<number | null>((resolve) => p.on('close', (c) => resolve(c)));
      process.kill(group ? -p.pid! : p.pid!, 'SIGINT');
      expect(await left).toBe('');
      const code = await closed;
      expect(err).toMatch(/interrupted; \d+ new measurement\(s\) saved in .*p\.measurements\.jsonl/);
      expect(code).toBe(130); // interrupted, its work kept: the shell's code for SIGINT, not bad input (2)
    },
    60_000,
  );

  it('stops quietly when the reader of its output goes away (| head)', () => {
    // `true` reads nothing and is gone long before the CLI has started, so every write meets a closed pipe.
    const r = spawnSync(
      'bash',
      ['-c', 'node "$1" simulate --help | true; echo "status ${PIPESTATUS[0]}"', 'bash', BUILT_BIN],
      { encoding: 'utf8' },
    );
    expect(r.stdout).toContain('status 0');
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled/);
  });

  it('says so, without a stack trace, when its output cannot be written (stdout on a full disk)', () => {
    const r = spawnSync('bash', ['-c', 'node "$1" presets > /dev/full', 'bash', BUILT_BIN], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('clustersim: cannot write to standard output: no space left on the device (ENOSPC)');
  });
});

describe('bin/clustersim.js killed with SIGKILL', () => {
  it('takes the simulation it started with it: no orphan keeps running', async () => {
    const p = spawn(
      process.execPath,
      [
        '--max-old-space-size=256',
        BUILT_BIN,
        'simulate',
        'scenarios/llama3-405b-16384xh100.yaml',
        '--alternatives',
        '0',
      ],
      {
        env: { ...process.env, CLUSTERSIM_NO_RESPAWN: '' },
        stdio: 'ignore',
      },
    );
    // The child the wrapper started (Linux: /proc lists a process's children).
    const childOf = (pid: number) => spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.trim();
    let child = '';
    for (let i = 0; i < 50 && child === ''; i++) {
      await new Promise((r) => setTimeout(r, 100));
      child = childOf(p.pid!);
    }
    expect(child).toMatch(/^\d+$/);
    await new Promise((r) => setTimeout(r, 500));
    p.kill('SIGKILL');
    let alive = true;
    for (let i = 0; i < 50 && alive; i++) {
      await new Promise((r) => setTimeout(r, 100));
      try {
        process.kill(Number(child), 0);
      } catch {
        alive = false;
      }
    }
    expect(alive).toBe(false);
  }, 30_000);
});
