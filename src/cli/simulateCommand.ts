import type { Command } from 'commander';
import { simulateStep, type StepResult } from '../sim/simulateStep.js';
import { VERSION } from '../version.js';
import { formatBytes, formatSeconds } from './units.js';
import { collect, scenarioFromFile } from './scenarioInput.js';
import type { Output } from './output.js';
import { addStepFileOptions, writeStepFiles, type StepFileOptions } from './reportFiles.js';

/** The `--json` document of `simulate`: the result plus the version that made it. */
export function simulateJson(result: StepResult): Record<string, unknown> {
  return { version: VERSION, ...result };
}

function pct(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(1)}%`;
}

/** The human-readable summary of one simulated step. */
export function formatStepSummary(r: StepResult, scenario: { clusterName: string; modelName: string }): string {
  const m = r.memory;
  const lines = [
    `${r.name}: ${scenario.modelName} on ${scenario.clusterName} (${r.gpus} GPUs), seed ${r.seed}`,
    `  split               tp ${r.parallel.tp} × pp ${r.parallel.pp} × dp ${r.parallel.dp}` +
      (r.parallel.pp > 1 ? `, ${r.parallel.schedule}${r.parallel.virtualStages > 1 ? ` (${r.parallel.virtualStages} chunks/stage)` : ''}` : '') +
      (r.parallel.zero > 0 ? `, ZeRO-${r.parallel.zero}` : '') +
      (r.parallel.sequenceParallel ? ', sequence parallel' : '') +
      (r.parallel.recompute !== 'none' ? `, ${r.parallel.recompute} recompute` : ''),
    '',
    `  step time           ${formatSeconds(r.stepTimeS)}`,
    `  throughput          ${r.samplesPerS.toFixed(1)} samples/s, ${Math.round(r.tokensPerS).toLocaleString('en-US')} tokens/s`,
    `  per GPU             ${r.tflopsPerGpu.toFixed(1)} TFLOP/s model, ${r.hardwareTflopsPerGpu.toFixed(1)} TFLOP/s hardware`,
    `  MFU                 ${(100 * r.mfu).toFixed(1)}%`,
    '',
    `  memory per GPU      ${formatBytes(m.peakBytesPerGpu)} of ${formatBytes(m.capacityBytes)}: ${m.fits ? 'fits' : `OOM, short by ${formatBytes(m.shortfallBytes)}`}`,
    `    weights ${formatBytes(m.breakdown.weightsBytes)}, gradients ${formatBytes(m.breakdown.gradientsBytes)}, optimizer ${formatBytes(m.breakdown.optimizerBytes)},`,
    `    activations ${formatBytes(m.breakdown.activationsBytes)}, buffers ${formatBytes(m.breakdown.buffersBytes)}, runtime reserve ${formatBytes(m.breakdown.reserveBytes)}`,
    ...(m.perStage.length > 1 ? [`    per stage: ${m.perStage.map((s) => `${s.stage}: ${formatBytes(s.totalBytes)}${s.fits ? '' : ' OOM'}`).join(', ')}`] : []),
    '',
    '  where the time went (mean over GPUs)',
    `    compute                ${formatSeconds(r.breakdown.computeS).padStart(10)}  ${pct(r.breakdown.computeS, r.stepTimeS)}`,
    `    exposed communication  ${formatSeconds(r.breakdown.exposedCommS).padStart(10)}  ${pct(r.breakdown.exposedCommS, r.stepTimeS)}`,
    ...(r.parallel.pp > 1 ? [`    pipeline bubble        ${formatSeconds(r.breakdown.bubbleS).padStart(10)}  ${pct(r.breakdown.bubbleS, r.stepTimeS)}`] : []),
    `    idle                   ${formatSeconds(r.breakdown.idleS).padStart(10)}  ${pct(r.breakdown.idleS, r.stepTimeS)}`,
    `    (communication busy ${formatSeconds(r.breakdown.commS)}, ${pct(r.breakdown.commS - r.breakdown.exposedCommS, Math.max(r.breakdown.commS, 1e-30))} of it hidden behind compute)`,
    '',
    `  ${r.microBatchesPerStep} micro-batch(es) per step; ${r.buckets.count} gradient buckets of ${formatBytes(r.buckets.meanBytes)} on average` +
      (r.gradientAllReduce ? `; gradient reduction: ${r.gradientAllReduce.algorithm}/${r.gradientAllReduce.protocol}` : ''),
    ...r.notes.map((n) => `  note: ${n}`),
  ];
  return lines.join('\n');
}

export function registerSimulate(program: Command, io: Output): void {
  const cmd = program
    .command('simulate')
    .description('simulate one training step of a scenario and summarise it')
    .argument('<scenario>', 'scenario file (YAML or JSON)')
    .option('--set <path=value>', 'override a scenario field (repeatable), e.g. --set parallel.ddp.bucketMB=5', collect, [])
    .option('--json', 'print the result as one JSON object')
    .addHelpText(
      'after',
      `
Examples:
  $ clustersim simulate scenarios/bert-large-ddp-2node.yaml
  $ clustersim simulate scenarios/llama2-7b-ddp-16node.yaml --json
  $ clustersim simulate scenarios/bert-large-ddp-2node.yaml --set parallel.ddp.bucketMB=5 --set comm.mode=step
  $ clustersim simulate scenarios/bert-large-ddp-2node.yaml --timeline step.svg --report step.html --trace step.json --ranks 0,8`,
    );
  addStepFileOptions(cmd).action((file: string, opts: { set: string[]; json?: boolean } & StepFileOptions) => {
    const scenario = scenarioFromFile(file, opts.set);
    const run = simulateStep(scenario);
    const { result } = run;
    if (opts.json) io.out(JSON.stringify(simulateJson(result), null, 2));
    else io.out(formatStepSummary(result, { clusterName: scenario.cluster.name, modelName: scenario.model.name }));
    writeStepFiles(scenario, run, opts, io);
  });
}
