import type { Command } from 'commander';
import { stringify } from 'yaml';
import { loadScenarioFile, applyOverrides } from '../scenario/load.js';
import { applyImports, scenarioWithImports, type ImportOptions } from '../scenario/importSettings.js';
import { defaultSpace, narrowSpace, SpaceSyntaxError, SPACE_FIELDS, type PlanSpace } from '../plan/space.js';
import { DEFAULT_TOP, gpuSets, planSearch, type PlanProgress, type PlanResult } from '../plan/search.js';
import { applyProfileOption } from './calibrateCommand.js';
import { collect } from './scenarioInput.js';
import { jobsHelp, parseJobs } from './jobsOption.js';
import { formatPlan, planCsv, planJson, type PlanTextContext } from './planOutput.js';
import { checkOutputFiles, commandLineInputs, writeReportFile } from './reportFiles.js';
import { processOutput, type Output } from './output.js';
import { UsageError } from './usageError.js';
import type { Scenario } from '../scenario/resolve.js';
import { MAX_GPUS } from '../scenario/simulationLimits.js';

interface PlanOptions extends ImportOptions {
  set: string[];
  gpus?: string;
  space: string[];
  fix: string[];
  top: string;
  jobs?: string;
  json?: boolean;
  csv?: string;
  write?: string;
  tokens?: string;
  price?: string;
  profile?: string;
}

const SUFFIX: Record<string, number> = { '': 1, K: 1e3, M: 1e6, B: 1e9, G: 1e9, T: 1e12 };

/** Reads `--tokens`: a count with an optional K, M, B (or G) or T suffix, e.g. 2T or 1.5e12. */
export function parseTokens(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([KMBGT]?)\s*$/i.exec(text);
  const n = m ? Number(m[1]) * SUFFIX[m[2].toUpperCase()] : NaN;
  if (!(n >= 1) || !Number.isFinite(n) || n > 1e18) throw new UsageError(`--tokens: '${text}' is not a token count; give e.g. 2T, 300B or 1.5e12 (from 1 to 1e18)`);
  return n;
}

function parsePrice(text: string): number {
  const n = Number(text);
  if (!/^\s*\d+(\.\d+)?\s*$/.test(text) || !(n > 0) || n > 1e6) throw new UsageError(`--price: '${text}' is not a price per GPU-hour; give a number above 0, e.g. 2.5`);
  return n;
}

function parseTop(text: string): number {
  if (!/^\s*\d+\s*$/.test(text) || Number(text) < 1 || Number(text) > 100) throw new UsageError(`--top: '${text}' is not a count of setups to simulate in full; give a whole number from 1 to 100`);
  return Number(text);
}

/** Reads `--gpus`: a whole count of whole nodes (or fewer GPUs than one node holds). */
function parseGpus(text: string | undefined, s: Scenario): number {
  const own = s.cluster.nodes * s.cluster.node.gpusPerNode;
  if (text === undefined) return own;
  const perNode = s.cluster.node.gpusPerNode;
  if (!/^\s*\d+\s*$/.test(text) || Number(text) < 1) throw new UsageError(`--gpus: '${text}' is not a GPU count; give a whole number, e.g. --gpus 64 (a range is not supported yet)`);
  const gpus = Number(text);
  if (gpus > MAX_GPUS) throw new UsageError(`--gpus: ${gpus} is more than the ${MAX_GPUS} GPUs the simulator takes`);
  if (gpus > perNode && gpus % perNode !== 0) throw new UsageError(`--gpus: ${gpus} GPUs are not whole nodes of ${perNode} (${s.cluster.node.name}); give a multiple of ${perNode}`);
  return gpus;
}

function spaceOf(s: Scenario, opts: PlanOptions): PlanSpace {
  try {
    return narrowSpace(defaultSpace(s), opts.space, opts.fix);
  } catch (err) {
    if (err instanceof SpaceSyntaxError) throw new UsageError(`--space/--fix: ${err.message}`);
    throw err;
  }
}

/** A progress line on a terminal's stderr: which phase, how far. */
function planProgress(io: Output): { update: (p: PlanProgress) => void; stop: () => void } {
  const shown = io === processOutput && process.stderr.isTTY;
  const words = { prune: 'counting memory of layouts', bound: 'bounding candidates', estimate: 'estimating candidates', simulate: 'simulating the best' };
  let last = 0;
  return {
    update: (p) => {
      const now = Date.now();
      if (!shown || (now - last < 200 && p.done < p.total)) return;
      last = now;
      process.stderr.write(`\rplan: ${words[p.phase]} ${p.done}/${p.total}\x1b[K`);
    },
    stop: () => {
      if (shown) process.stderr.write('\r\x1b[K');
    },
  };
}

/** The winner as a scenario file: the input with the imports, `--set`, the GPU count and the winner's settings applied. */
function winnerYaml(raw: unknown, sets: readonly string[], result: PlanResult, file: string): string {
  const scenario = applyOverrides(raw, [...sets, ...result.rows[0].sets]);
  const head = [`# Written by clustersim plan from ${file}: the fastest setup found on ${result.gpus} GPUs.`, '# Relative paths in it (hfConfig, measured tables) are relative to the folder of that file.'];
  return `${head.join('\n')}\n${stringify(scenario)}`;
}

export function registerPlan(program: Command, io: Output): void {
  program
    .command('plan')
    .description('search the ways to split a model over the GPUs: prune by memory, estimate, simulate the best, rank them')
    .argument('<scenario>', 'scenario file (YAML or JSON): the model, the cluster and the training batch')
    .option('--gpus <n>', "GPUs to plan for (whole nodes; default: the scenario's)")
    .option('--space <name=a,b>', `values to search for one setting (repeatable): ${Object.keys(SPACE_FIELDS).join(', ')}`, collect, [])
    .option('--fix <name=a>', 'hold one setting at one value (repeatable), e.g. --fix tp=8 or --fix parallel.zero=1', collect, [])
    .option('--top <k>', 'how many of the best estimates to simulate in full and show', String(DEFAULT_TOP))
    .option('--set <path=value>', 'override a scenario field under every candidate (repeatable)', collect, [])
    .option('--megatron-args <args>', 'take the model and training from a Megatron-LM command line, as simulate does')
    .option('--deepspeed-config <ds_config.json>', 'take batch sizes, buckets and precision from a DeepSpeed config, as simulate does')
    .option('--profile <profile.json>', 'use the constants `clustersim calibrate` measured')
    .option('--tokens <n>', 'training tokens (e.g. 2T): days, GPU-hours and, with --price, cost of the winner')
    .option('--price <per-gpu-hour>', 'price of one GPU-hour, for the cost of --tokens')
    .option('--jobs <n>', jobsHelp('the candidates'))
    .option('--json', 'print the whole answer as JSON')
    .option('--csv <file>', 'write the simulated setups as CSV')
    .option('--write <best.yaml>', 'write the winner as a scenario file')
    .addHelpText(
      'after',
      `
Examples:
  $ clustersim plan scenarios/llama2-70b-tp8-scale.yaml --gpus 64
  $ clustersim plan scenarios/llama2-13b-tp8-nvswitch.yaml --fix tp=8 --space microBatch=1,2
  $ clustersim plan scenarios/llama2-7b-zero3-pcie.yaml --tokens 1T --price 2.5 --write best.yaml
  $ clustersim plan scenarios/bert-large-ddp-2node.yaml --space zero=0,1 --top 8 --json --csv plan.csv

How it searches: every layout of the space that tiles the GPUs (tp × cp × pp × dp, micro-batch, 1F1B or
interleaved with its chunks per stage); for each, the cheapest ZeRO stage, offload and recompute that fit
in memory (counted, not simulated; more recompute, offload or ZeRO-3 than needed only costs time); every
survivor estimated from two short simulations; the best --top simulated in full and ranked by that.
Held from the scenario: the model, GPUs and network, the global batch and sequence length, precision,
kernels, buckets and overlap settings (change those with --set). The default space: tp in powers of 2 inside
a node, cp 1 (1, 2, 4 from 8,192 tokens), any pp, micro-batch 1 to 16, virtual stages 2 to 8.`,
    )
    .action(async (file: string, opts: PlanOptions) => {
      const { scenario: imported, imports } = scenarioWithImports(file, opts, opts.set, (w) => io.err(`clustersim: warning: ${w}`));
      const { scenario, profile } = applyProfileOption(imported, opts.profile, io);
      const gpus = parseGpus(opts.gpus, scenario);
      const top = parseTop(opts.top);
      const tokens = opts.tokens !== undefined ? parseTokens(opts.tokens) : undefined;
      const price = opts.price !== undefined ? parsePrice(opts.price) : undefined;
      if (price !== undefined && tokens === undefined) throw new UsageError('--price: needs --tokens (the cost is of training that many tokens)');
      const space = spaceOf(scenario, opts);
      const jobs = parseJobs(opts.jobs, 'the candidates');
      checkOutputFiles([[opts.csv, '--csv'], [opts.write, '--write']], commandLineInputs([file], opts));
      const f = loadScenarioFile(file);
      const raw = applyImports(f.raw, imports);
      const progress = planProgress(io);
      const t0 = Date.now();
      let result: PlanResult;
      try {
        result = await planSearch({ raw, source: f.source, baseDir: f.baseDir, scenario, sets: opts.set, gpus, space, top, ...(profile ? { profile: { profile: profile.profile, path: profile.file } } : {}) }, { jobs, onProgress: progress.update });
      } finally {
        progress.stop();
      }
      io.err(`plan: ${result.candidates} candidates, ${result.estimated} estimated, ${result.rows.length + (result.own && !result.rows.includes(result.own) ? 1 : 0)} simulated in full, in ${((Date.now() - t0) / 1e3).toFixed(1)} s on ${jobs} thread${jobs === 1 ? '' : 's'}`);
      const sizeSets = gpus !== scenario.cluster.nodes * scenario.cluster.node.gpusPerNode ? gpuSets(scenario, gpus) : [];
      const command = `clustersim simulate ${file}${[...opts.set, ...sizeSets].map((s) => ` --set ${s}`).join('')}`;
      const ctx: PlanTextContext = { name: scenario.name, command, gpus, ...(tokens !== undefined ? { tokens } : {}), ...(price !== undefined ? { price } : {}) };
      io.out(opts.json ? JSON.stringify(planJson(result, ctx), null, 2) : formatPlan(result, ctx, top));
      if (opts.csv) writeReportFile(opts.csv, planCsv(result), io);
      if (opts.write) {
        if (result.rows.length === 0) io.err(`clustersim: --write ${opts.write}: nothing fits, so no scenario was written`);
        else writeReportFile(opts.write, winnerYaml(raw, [...opts.set, ...sizeSets], result, file), io);
      }
    });
}
