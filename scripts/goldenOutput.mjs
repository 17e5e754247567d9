// What the golden files of test/golden hold for a bundled scenario: `simulate --json` as printed, and the sha-256 and
// event count of its Perfetto trace (too large to keep). Shared by scripts/golden.mjs and the test that checks them.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Every scenario the repository bundles that `simulate` runs on its own. The 16,384-GPU one runs without its
 * alternatives (four more simulations of a minute and more each); the others print theirs.
 */
export const GOLDEN_SCENARIOS = [
  'scenarios/bert-large-ddp-2node.yaml',
  'scenarios/deepseek-v3-2048xh800.yaml',
  'scenarios/gpt3-175b-1024xa100.yaml',
  'scenarios/llama2-13b-tp8-nvswitch.yaml',
  'scenarios/llama2-13b-tp8-pcie.yaml',
  'scenarios/llama2-70b-tp8-scale.yaml',
  'scenarios/llama2-70b-zero2-8xa100.yaml',
  'scenarios/llama2-7b-ddp-16node.yaml',
  'scenarios/llama2-7b-zero3-nvlink.yaml',
  'scenarios/llama2-7b-zero3-pcie.yaml',
  'scenarios/llama3-405b-16384xh100.yaml',
  'scenarios/mixtral-8x7b-ep8-64xh100.yaml',
  'scenarios/checks/dgxc-llama31-70b-cp2.yaml',
  'scenarios/checks/dgxc-llama31-8b-cp2.yaml',
  'scenarios/checks/dgxc-nemotron4-15b.yaml',
  'scenarios/checks/dgxc-nemotron4-340b.yaml',
  'scenarios/checks/fms-fsdp-llama2-13b.yaml',
  'scenarios/checks/fms-fsdp-llama2-70b.yaml',
  'scenarios/checks/fms-fsdp-llama2-7b.yaml',
  'scenarios/imports/gpt3-175b-a100.yaml',
  'scenarios/imports/llama2-7b-a100-1node.yaml',
];

export function goldenPath(scenario) {
  return join('test', 'golden', `${basename(scenario, '.yaml')}.json`);
}

const WITHOUT_ALTERNATIVES = new Set(['scenarios/llama3-405b-16384xh100.yaml', 'scenarios/deepseek-v3-2048xh800.yaml']);

/** The built CLI's arguments for `scenario`, writing its trace to `tracePath` (alternatives on one thread). */
function simulateArgs(scenario, tracePath, bin) {
  const alternatives = WITHOUT_ALTERNATIVES.has(scenario) ? ['--alternatives', '0'] : [];
  return [bin, 'simulate', scenario, '--json', '--jobs', '1', ...alternatives, '--trace', tracePath];
}

/**
 * Runs the built CLI on `scenario`; resolves to what the golden file holds. `bin`: the CLI to run (the tests run one
 * built outside the checkout).
 */
export async function goldenOf(scenario, bin = 'bin/clustersim.js') {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-golden-'));
  try {
    const tracePath = join(dir, 'trace.json');
    const { stdout } = await run(process.execPath, simulateArgs(scenario, tracePath, bin), {
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    const trace = readFileSync(tracePath);
    return {
      scenario,
      stdoutSha256: createHash('sha256').update(stdout).digest('hex'),
      simulate: JSON.parse(stdout),
      trace: {
        sha256: createHash('sha256').update(trace).digest('hex'),
        events: JSON.parse(trace.toString('utf8')).traceEvents.length,
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
