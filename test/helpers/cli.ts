import { runCli } from '../../src/cli/main.js';

/** Runs the CLI in-process and captures what it prints. */
export async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(['node', 'clustersim', ...args], {
    out: (s) => (out += s.endsWith('\n') ? s : `${s}\n`),
    err: (s) => (err += s.endsWith('\n') ? s : `${s}\n`),
  });
  return { code, out, err };
}
