import { expect } from 'vitest';
import { runCli, EXIT_BAD_INPUT } from '../../src/cli/main.js';
import type { Output } from '../../src/cli/output.js';

export const STACK_FRAME = '    at ';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with a capturing Output. */
export async function cli(...args: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io: Output = { out: (t) => void out.push(t), err: (t) => void err.push(t) };
  const code = await runCli(['node', 'clustersim', ...args], io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Exit code 2, nothing on stdout, every fragment on stderr, and no stack trace anywhere. */
export function expectBadInput(r: CliRun, ...fragments: (string | RegExp)[]): void {
  expect(r.code, r.stderr).toBe(EXIT_BAD_INPUT);
  for (const f of fragments) {
    if (typeof f === 'string') expect(r.stderr).toContain(f);
    else expect(r.stderr).toMatch(f);
  }
  expect(r.stderr).not.toContain(STACK_FRAME);
  expect(r.stdout).not.toContain(STACK_FRAME);
  expect(r.stdout).toBe('');
}
