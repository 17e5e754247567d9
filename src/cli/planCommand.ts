import { Option, type Command } from 'commander';
import { stringify } from 'yaml';
import { loadScenarioFile, applyOverrides } from '../scenario/load.js';
import { applyImports, scenarioWithImports } from '../scenario/importSettings.js';
import { SPACE_FIELDS } from '../plan/space.js';
import { DEFAULT_TOP, gpuSets, planSearch, type PlanProgress, type PlanResult } from '../plan/search.js';
import { applyProfileOption, onInterrupt } from './calibrateCommand.js';
import { collect } from './scenarioInput.js';
import { jobsHelp, parseJobs } from './jobsOption.js';
import {
  formatPlan,
  formatSizes,
  noteLines,
  PLAN_UNITS,
  planCsv,
  planJson,
  searchLines,
  sizesJson,
  type PlanTextContext,
} from './planOutput.js';
import { parseGpus, parsePrice, parseTokens, parseTop, shardOf, spaceOf, type PlanOptions } from './planOptions.js';
import { VERSION } from '../version.js';
import { checkOutputFiles, commandLineInputs, writeReportFile } from './reportFiles.js';
import { processOutput, type Output } from './output.js';
import { InterruptedError, UsageError } from './usageError.js';
import { shardText } from '../sweep/grid.js';
import { planId, planPartText } from '../plan/parts.js';
import { bestSize, OBJECTIVES } from '../plan/objective.js';

/** A progress line on a terminal's stderr: which phase, how far. */
function planProgress(io: Output, prefix: string): { update: (p: PlanProgress) => void; stop: () => void } {
  const shown = io === processOutput && process.stderr.isTTY;
  const words = {
    prune: 'counting memory of layouts',
    bound: 'bounding candidates',
    estimate: 'estimating candidates',
    simulate: 'simulating the best',
  };
  let last = 0;
  return {
    update: (p) => {
      const now = Date.now();
      if (!shown || (now - last < 200 && p.done < p.total)) return;
      last = now;
      process.stderr.write(`\rplan: ${prefix}${words[p.phase]} ${p.done}/${p.total}\x1b[K`);
    },
    stop: () => {
      if (shown) process.stderr.write('\r\x1b[K');
    },
  };
}

/** A word as a POSIX shell reads it back: bare when it is safe, else in single quotes. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/** The `simulate` command of the plan's input: the file, its imports, the profile and the overrides. */
function simulateCommand(file: string, opts: PlanOptions, sets: readonly string[]): string {
  const words = ['clustersim', 'simulate', file];
  if (opts.megatronArgs !== undefined) words.push('--megatron-args', opts.megatronArgs);
  if (opts.deepspeedConfig !== undefined) words.push('--deepspeed-config', opts.deepspeedConfig);
  if (opts.profile !== undefined) words.push('--profile', opts.profile);
  for (const s of sets) words.push('--set', s);
  return words.map(shellQuote).join(' ');
}

/**
 * The winner as a scenario file: the input with the imports, `--set`, the GPU count and the winner's settings applied.
 */
function winnerYaml(raw: unknown, sets: readonly string[], result: PlanResult, file: string, profile?: string): string {
  const scenario = applyOverrides(raw, [...sets, ...result.rows[0].sets]);
  const head = [
    `# Written by clustersim plan from ${file}: the fastest setup found on ${result.gpus} GPUs.`,
    '# Relative paths in it (hfConfig, measured tables) are relative to the folder of that file.',
  ];
  if (profile !== undefined) head.push(`# Planned with --profile ${profile}: simulate it with the same profile.`);
  if (result.interrupted)
    head.push(
      '# The search was interrupted (Ctrl-C): this is the best of what it had estimated, not of the whole space.',
    );
  return `${head.join('\n')}\n${stringify(scenario)}`;
}

export function registerPlan(program: Command, io: Output): void {
  program
    .command('plan')
    .description(
      'search the ways to split a model over the GPUs: prune by memory, estimate, simulate the best, rank them',
    )
    .argument('<scenario>', 'scenario file (YAML or JSON): the model, the cluster and the training batch')
    .option(
      '--gpus <n>',
      "GPUs to plan for: a count, a list or a doubling range (64..1024), whole nodes (default: the scenario's)",
    )
    .addOption(
      new Option(
        '--objective <what>',
        'with several GPU counts, which is best: the most tokens/s (throughput, or time to train), ' +
          'or the fewest GPU-hours per token (cost)',
      )
        .choices(OBJECTIVES)
        .default('throughput'),
    )
    .option(
      '--space <name=a,b>',
      `values to search for one setting (repeatable): ${Object.keys(SPACE_FIELDS).join(', ')}`,
      collect,
      [],
    )
    .option(
      '--fix <name=a>',
      'hold one setting at one value (repeatable), e.g. --fix tp=8 or --fix parallel.zero=1',
      collect,
      [],
    )
    .option('--top <k>', 'how many of the best estimates to simulate in full and show', String(DEFAULT_TOP))
    .option('--set <path=value>', 'override a scenario field under every candidate (repeatable)', collect, [])
    .option('--megatron-args <args>', 'take the model and training from a Megatron-LM command line, as simulate does')
    .option(
      '--deepspeed-config <ds_config.json>',
      'take batch sizes, buckets and precision from a DeepSpeed config, as simulate does',
    )
    .option('--profile <profile.json>', 'use the constants `clustersim calibrate` measured')
    .option('--tokens <n>', 'training tokens (e.g. 2T): days, GPU-hours and, with --price, cost of the winner')
    .option('--price <per-gpu-hour>', 'price of one GPU-hour, for the cost of --tokens')
    .option('--jobs <n>', jobsHelp('the candidates'))
    .option('--json', 'print the whole answer as JSON')
    .option('--csv <file>', 'write the simulated setups as CSV')
    .option('--write <best.yaml>', 'write the winner as a scenario file')
    .option(
      '--report <plan.html>',
      'write an HTML report: step time against memory per GPU with the Pareto front, the table, why',
    )
    .option(
      '--shard <i/N>',
      'plan part i of N (every N-th layout) and print it, or write it with --out, for clustersim merge',
    )
    .option('--out <part.json>', 'with --shard: write the part to this file')
    .addHelpText(
      'after',
      `
Examples:
  $ clustersim plan scenarios/llama2-70b-tp8-scale.yaml --gpus 64
  $ clustersim plan scenarios/llama2-13b-tp8-nvswitch.yaml --fix tp=8 --space microBatch=1,2
  $ clustersim plan scenarios/llama2-7b-zero3-pcie.yaml --tokens 1T --price 2.5 --write best.yaml --report plan.html
  $ clustersim plan scenarios/bert-large-ddp-2node.yaml --space zero=0,1 --top 8 --json --csv plan.csv
  $ clustersim plan a.yaml --gpus 1024 --shard 1/2 --out part-1.json   # on one machine
  $ clustersim plan a.yaml --gpus 1024 --shard 2/2 --out part-2.json   # on another
  $ clustersim merge part-*.json                                      # the answer of the whole plan

How it searches: every layout of the space that tiles the GPUs (tp × cp × pp × dp, micro-batch, 1F1B or
interleaved with its chunks per stage); for each, the cheapest ZeRO stage, offload and recompute that fit
in memory (counted, not simulated; more recompute, offload or ZeRO-3 than needed only costs time); the
survivors estimated from two short simulations each, in the order of a lower bound from the compiled step,
until no other can be among the best --top; those simulated in full and ranked by that. Ctrl-C stops the
search and still prints the best of what it estimated.
Held from the scenario: the model, GPUs and network, the global batch and sequence length, precision,
kernels, buckets and overlap settings (change those with --set). The default space: tp in powers of 2 inside
a node, cp 1 (1, 2, 4 from 8,192 tokens), any pp, micro-batch 1 to 16, virtual stages 2 to 8.`,
    )
    .action(async (file: string, opts: PlanOptions) => {
      const { scenario: imported, imports } = scenarioWithImports(file, opts, opts.set, (w) =>
        io.err(`clustersim: warning: ${w}`),
      );
      const { scenario, profile } = applyProfileOption(imported, opts.profile, io);
      const sizes = parseGpus(opts.gpus, scenario);
      const top = parseTop(opts.top);
      const tokens = opts.tokens !== undefined ? parseTokens(opts.tokens) : undefined;
      const price = opts.price !== undefined ? parsePrice(opts.price) : undefined;
      if (price !== undefined && tokens === undefined)
        throw new UsageError('--price: needs --tokens (the cost is of training that many tokens)');
      const space = spaceOf(scenario, opts);
      const jobs = parseJobs(opts.jobs, 'the candidates');
      const shard = shardOf(opts, sizes);
      checkOutputFiles(
        [
          [opts.csv, '--csv'],
          [opts.write, '--write'],
          [opts.report, '--report'],
          [opts.out, '--out'],
        ],
        commandLineInputs([file], opts),
      );
      const f = loadScenarioFile(file);
      const raw = applyImports(f.raw, imports);
      const plans: PlanResult[] = [];
      const controller = new AbortController();
      const removeHandler = onInterrupt(
        io,
        controller,
        'plan',
        'the candidates in flight, then simulating the best found so far',
      );
      try {
        for (const gpus of sizes) {
          if (controller.signal.aborted) break;
          const progress = planProgress(io, sizes.length > 1 ? `${gpus} GPUs: ` : '');
          const t0 = Date.now();
          try {
            plans.push(
              await planSearch(
                {
                  raw,
                  source: f.source,
                  baseDir: f.baseDir,
                  scenario,
                  sets: opts.set,
                  gpus,
                  space,
                  top,
                  ...(shard ? { shard } : {}),
                  ...(profile ? { profile: { profile: profile.profile, path: profile.file } } : {}),
                },
                { jobs, onProgress: progress.update, signal: controller.signal },
              ),
            );
          } finally {
            progress.stop();
          }
          const p = plans[plans.length - 1];
          io.err(
            `plan: ${gpus} GPUs: ${p.candidates} candidates, ${p.estimated} estimated, ` +
              `${p.rows.length + (p.own && !p.rows.includes(p.own) ? 1 : 0)} simulated in full, ` +
              `in ${((Date.now() - t0) / 1e3).toFixed(1)} s on ${jobs} thread${jobs === 1 ? '' : 's'}`,
          );
        }
      } finally {
        removeHandler();
      }
      const chosen = bestSize(plans, opts.objective) ?? plans.length - 1;
      const ownGpus = scenario.cluster.nodes * scenario.cluster.node.gpusPerNode;
      const sizeSets = (gpus: number) => (gpus !== ownGpus ? gpuSets(scenario, gpus) : []);
      const ctxOf = (gpus: number): PlanTextContext => ({
        name: scenario.name,
        command: simulateCommand(file, opts, [...opts.set, ...sizeSets(gpus)]),
        gpus,
        ...(tokens !== undefined ? { tokens } : {}),
        ...(price !== undefined ? { price } : {}),
      });
      if (shard) {
        const p = plans[0];
        const id = planId({
          raw,
          sets: opts.set,
          gpus: p.gpus,
          space,
          top,
          ...(opts.profile !== undefined ? { profile: opts.profile } : {}),
          ...(opts.megatronArgs !== undefined ? { megatronArgs: opts.megatronArgs } : {}),
          ...(opts.deepspeedConfig !== undefined ? { deepspeedConfig: opts.deepspeedConfig } : {}),
        });
        const text = planPartText(p, { name: scenario.name, command: ctxOf(p.gpus).command, top }, id, shard);
        if (opts.out) writeReportFile(opts.out, text, io);
        else io.out(text.trimEnd());
        if (controller.signal.aborted)
          throw new InterruptedError(
            `plan part ${shardText(shard)} interrupted (Ctrl-C): the part covers the candidates done before ` +
              `it${opts.out ? ` and is in ${opts.out}` : ''}; run it again for a complete answer`,
          );
        return;
      }
      if (opts.json)
        io.out(
          JSON.stringify(
            plans.length === 1
              ? planJson(plans[0], ctxOf(plans[0].gpus))
              : sizesJson(plans, chosen, opts.objective, ctxOf),
            null,
            2,
          ),
        );
      else
        io.out(
          plans.length === 1
            ? formatPlan(plans[0], ctxOf(plans[0].gpus), top)
            : `${formatSizes(plans, chosen, opts.objective, ctxOf(plans[chosen].gpus))}\n\n` +
                `${formatPlan(plans[chosen], ctxOf(plans[chosen].gpus), top)}`,
        );
      if (opts.csv) writeReportFile(opts.csv, planCsv(plans), io);
      if (opts.report) {
        const p = plans[chosen];
        const { planReportHtml } = await import('../report/planReport.js');
        const text = {
          title: `Plan: ${scenario.name} on ${p.gpus} GPUs`,
          meta: `clustersim ${VERSION} plan ${file}`,
          search: searchLines(p, top),
          notes: noteLines(p, ctxOf(p.gpus)),
        };
        writeReportFile(opts.report, planReportHtml(p, text, PLAN_UNITS), io);
      }
      if (opts.write) {
        const p = plans[chosen];
        if (p.rows.length === 0)
          io.err(`clustersim: --write ${opts.write}: no setup was simulated, so no scenario was written`);
        else
          writeReportFile(opts.write, winnerYaml(raw, [...opts.set, ...sizeSets(p.gpus)], p, file, opts.profile), io);
      }
      if (controller.signal.aborted) {
        const counts = plans.length < sizes.length ? `${plans.length} of ${sizes.length} GPU counts and the ` : '';
        throw new InterruptedError(
          `plan interrupted (Ctrl-C): the answer above covers the ${counts}candidates done before it`,
        );
      }
    });
}
