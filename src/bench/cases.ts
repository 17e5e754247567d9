import { holdModelEventsPerS } from './holdModel.js';
import { simulateStep } from '../sim/simulateStep.js';
import { resolveScenario } from '../scenario/resolve.js';
import { buildTopology } from '../sim/network/topology.js';
import { CollectiveService } from '../sim/collectives/collectiveService.js';
import { resolveClusterSection } from '../scenario/resolve.js';
import { loadScenarioFile } from '../scenario/load.js';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { GROWTH_CASES } from './growth.js';

/** What one benchmark case measured in one process. */
export interface CaseResult {
  /** The figure of merit: events/s for the engine, wall seconds for simulations. */
  value: number;
  unit: string;
  /** Simulated events, where it applies. */
  events?: number;
}

function timed<T>(f: () => T): { result: T; wallS: number } {
  const t0 = process.hrtime.bigint();
  const result = f();
  return { result, wallS: Number(process.hrtime.bigint() - t0) / 1e9 };
}

/** Times the simulation of one step of a raw scenario (resolution included). */
function stepCase(raw: Record<string, unknown>): () => CaseResult {
  return () => {
    const { result, wallS } = timed(() => simulateStep(resolveScenario(raw, 'bench', '.')));
    return { value: wallS, unit: 's', events: result.result.eventsFired };
  };
}

/** Repository root (this file is dist/bench/cases.js). */
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Times one step of a bundled scenario file. */
function scenarioFileCase(file: string): () => CaseResult {
  return () => {
    const { raw } = loadScenarioFile(repoRoot + file);
    return stepCase(raw as Record<string, unknown>)();
  };
}

/** Times a whole CLI command as a user runs it (process start-up and worker threads included). */
function cliCase(args: string[]): () => CaseResult {
  return () => {
    const { wallS } = timed(() =>
      execFileSync(process.execPath, [repoRoot + 'bin/clustersim.js', ...args], {
        cwd: repoRoot,
        stdio: ['ignore', 'ignore', 'inherit'],
      }),
    );
    return { value: wallS, unit: 's' };
  };
}

/**
 * Ring all-reduce of `bytes` over every GPU of `nodes` DGX A100 nodes, each ring step its own flows;
 * `skipRepeats` false simulates every step instead of skipping the identical ones.
 */
function ringStepCase(nodes: number, bytes: number, skipRepeats = true): () => CaseResult {
  return () => {
    const { result, wallS } = timed(() => {
      const topology = buildTopology(resolveClusterSection({ preset: 'dgx-a100-80gb', nodes }, 'bench'));
      const svc = new CollectiveService(topology, {
        mode: 'step',
        allReduceAlgorithm: 'ring',
        protocol: 'Simple',
        skipRepeats,
      });
      const group = Array.from({ length: topology.gpuCount }, (_, i) => i);
      return svc.simulateIdleNs('all_reduce', group, bytes, { algorithm: 'ring', protocol: 'Simple', predictedNs: 0 });
    });
    void result;
    return { value: wallS, unit: 's' };
  };
}

const GiB = 2 ** 30;

/** The benchmark cases by name, in the order they are reported. */
export const BENCH_CASES: Record<string, { title: string; run: () => CaseResult }> = {
  'hold-1e3': {
    title: 'engine hold model, 1e3 pending events',
    run: () => ({ value: holdModelEventsPerS(1e3, 5e6), unit: 'events/s' }),
  },
  'hold-1e5': {
    title: 'engine hold model, 1e5 pending events',
    run: () => ({ value: holdModelEventsPerS(1e5, 3e6), unit: 'events/s' }),
  },
  'hold-1e6': {
    title: 'engine hold model, 1e6 pending events',
    run: () => ({ value: holdModelEventsPerS(1e6, 4e6), unit: 'events/s' }),
  },
  'ring-step-256': { title: 'ring all-reduce 1 GiB, step-by-step, 256 GPUs', run: ringStepCase(32, GiB) },
  'ring-step-1024': { title: 'ring all-reduce 1 GiB, step-by-step, 1,024 GPUs', run: ringStepCase(128, GiB) },
  'ring-step-1024-noskip': {
    title: 'ring all-reduce 1 GiB, every step simulated, 1,024 GPUs',
    run: ringStepCase(128, GiB, false),
  },
  'ddp-llama2-7b-64': {
    title: 'DDP step, llama2-7b, 64 GPUs (8 dgx-a100-80gb)',
    run: stepCase({
      cluster: { preset: 'dgx-a100-80gb', nodes: 8 },
      model: { preset: 'llama2-7b' },
      training: { globalBatch: 64, microBatch: 1 },
    }),
  },
  'ddp-llama2-7b-1024': {
    title: 'DDP step, llama2-7b, 1,024 GPUs (128 dgx-a100-80gb)',
    run: stepCase({
      cluster: { preset: 'dgx-a100-80gb', nodes: 128 },
      model: { preset: 'llama2-7b' },
      training: { globalBatch: 1024, microBatch: 1 },
    }),
  },
  'ddp-llama2-7b-1024-full': {
    title: 'DDP step, llama2-7b, 1,024 GPUs, full fidelity',
    run: stepCase({
      cluster: { preset: 'dgx-a100-80gb', nodes: 128 },
      model: { preset: 'llama2-7b' },
      training: { globalBatch: 1024, microBatch: 1 },
      simulation: { fidelity: 'full' },
    }),
  },
  'gpt3-175b-1024': {
    title: 'GPT-3 175B, 1,024 A100, TP 8 PP 8 DP 16, interleaved',
    run: stepCase({
      cluster: { preset: 'dgx-a100-80gb', nodes: 128 },
      model: { preset: 'gpt3-175b' },
      training: { globalBatch: 1536, microBatch: 1 },
      parallel: { tp: 8, pp: 8, schedule: 'interleaved', virtualStages: 3, recompute: 'full' },
    }),
  },
  'gpt-1t-3072': {
    title: 'GPT 1T (128 layers, h 25600), 3,072 A100, TP 8 PP 64 DP 6, interleaved',
    run: stepCase({
      cluster: { preset: 'dgx-a100-80gb', nodes: 384 },
      model: { preset: 'megatron-gpt-1t' },
      training: { globalBatch: 3072, microBatch: 1 },
      parallel: { tp: 8, pp: 64, schedule: 'interleaved', virtualStages: 2, recompute: 'full' },
    }),
  },
  'llama3-405b-16384': {
    title: 'Llama-3-405B, 16,384 H100, TP 8 PP 16 DP 128, seq 8192',
    run: scenarioFileCase('scenarios/llama3-405b-16384xh100.yaml'),
  },
  'scale-70b-8-8192': {
    title: 'clustersim scale, Llama-2-70B TP 8, 8..8192 GPUs (11 points)',
    run: cliCase(['scale', 'scenarios/llama2-70b-tp8-scale.yaml', '--gpus', '8..8192', '--mode', 'weak', '--json']),
  },
  'plan-70b-64xh100': {
    title: 'clustersim plan, Llama-2-70B on 64 H100, global batch 512 (target ≤ 30 s)',
    run: cliCase([
      'plan',
      'scenarios/llama2-70b-tp8-scale.yaml',
      '--gpus',
      '64',
      '--set',
      'cluster.preset=dgx-h100',
      '--set',
      'training.globalBatch=512',
      '--json',
    ]),
  },
  ...Object.fromEntries(
    Object.entries(GROWTH_CASES).map(([name, g]) => [name, { title: g.title, run: stepCase(g.raw) }]),
  ),
};
