import { modelLeftOutNote } from '../sim/workload/leftOut.js';
import type { Command } from 'commander';
import { MEMORY_BAND_NOTE, memoryBandJson } from '../accuracy/bandText.js';
import { wrapWords } from '../report/format.js';
import { hostMemoryPerNode, type HostMemory } from '../sim/memory/hostMemory.js';
import { stageMemories, type StageMemory } from '../sim/memory/stageMemory.js';
import { VERSION } from '../version.js';
import { strategyText } from '../report/format.js';
import { collect } from './scenarioInput.js';
import { describeImports, importsJson, scenarioWithImports, type ImportOptions } from '../scenario/importSettings.js';
import { formatBytes } from './units.js';
import { describeOptimizerState } from '../sim/memory/optimizerState.js';
import type { Output } from './output.js';
import { table } from '../report/textTable.js';

function verdict(m: StageMemory, capacity: number): string {
  return m.fits
    ? `fits (${formatBytes(capacity - m.totalBytes)} free)`
    : `OOM by ${formatBytes(m.totalBytes - capacity)}`;
}

function hostLine(h: HostMemory): string {
  const what =
    'Host memory for CPU offload (optimizer state, fp32 gradients and 16-bit partitions): ' +
    `${formatBytes(h.bytesPerNode)} on the fullest node`;
  if (h.capacityBytes === undefined)
    return `${what}; the node's host memory is not stated (give cluster.node.hostMemoryGiB to check it).`;
  const fitText = h.fits
    ? `fits (${formatBytes(h.capacityBytes - h.bytesPerNode)} free)`
    : `does not fit, short by ${formatBytes(h.shortfallBytes)}`;
  return `${what} of ${formatBytes(h.capacityBytes)}: ${fitText}.`;
}

/** What ZeRO-3's gathered buffers hold, and how to say the other framework's. */
function zero3GatherLine(stage3: 'deepspeed' | 'fsdp'): string {
  return stage3 === 'deepspeed'
    ? "ZeRO-3 as DeepSpeed gathers it: one module's 16-bit weights and gradient at a time " +
        "(parallel.zeroConfig.stage3: fsdp for FSDP's block at a time)."
    : "ZeRO-3 as PyTorch FSDP gathers it: a transformer block's 16-bit weights and the next one's " +
        "(parallel.zeroConfig.stage3: deepspeed for DeepSpeed's module at a time).";
}

/** Examples of --help too long for one line here. */
const OPTIMIZER_STATE_EXAMPLE =
  'clustersim memory scenarios/llama2-70b-zero2-8xa100.yaml --set training.optimizerState.momentum=bf16 ' +
  '--set training.optimizerState.variance=bf16';

export function registerMemory(program: Command, io: Output): void {
  program
    .command('memory')
    .description('memory per GPU for each pipeline stage, against capacity, without simulating the step')
    .argument('<scenario>', 'scenario file (YAML or JSON)')
    .option('--set <path=value>', 'override a scenario field (repeatable)', collect, [])
    .option(
      '--megatron-args <args>',
      'build the strategy (and model/training where given) from a Megatron-LM command line, as pasted, ' +
        'or @file holding it',
    )
    .option(
      '--deepspeed-config <ds_config.json>',
      'take batch sizes, ZeRO stage, buckets, offload and precision from a DeepSpeed config',
    )
    .option(
      '--json',
      'print { capacityBytes, fits, gpuFits, shortfallBytes, optimizerState, stages: [...], host } as JSON (fits: ' +
        'GPUs and, with CPU offload, hosts; optimizerState only when not all fp32)',
    )
    .addHelpText(
      'after',
      `
Examples:
  $ clustersim memory scenarios/llama2-70b-zero2-8xa100.yaml
  $ clustersim memory scenarios/llama2-70b-zero2-8xa100.yaml --set parallel.zero=3 --set parallel.offload=cpu
  $ clustersim memory scenarios/gpt3-175b-1024xa100.yaml --set parallel.schedule=1f1b --json
  $ ${OPTIMIZER_STATE_EXAMPLE}
  $ clustersim memory scenarios/imports/llama2-7b-a100-1node.yaml --deepspeed-config scenarios/imports/ds_config.json

What sets the memory (docs/scenarios.md): parallel.tp, pp, dp and cp (ZeRO shards over dp × cp),
zero (0-3), offload, recompute, sequenceParallel, schedule and virtualStages (passes in flight),
layersPerStage (or accountForEmbeddingInSplit, accountForLossInSplit), fp32Gradients, fp32Reduction and the
bucket sizes (ddp.bucketMB, zeroConfig.reduceBucketMB); training.microBatch, seqLen, precision,
flashAttention, optimizer and optimizerState. In --json each
stage gives paramsPerRank (after TP, before ZeRO) and paramsHeldPerGpu (what each GPU keeps between
steps: ZeRO-3 shards it over dp × cp).`,
    )
    .action((file: string, opts: { set: string[]; json?: boolean } & ImportOptions) => {
      const warnings: string[] = [];
      const { scenario, imports } = scenarioWithImports(file, opts, opts.set, (w) => {
        warnings.push(w);
        io.err(`clustersim: warning: ${w}`);
      });
      const stages = stageMemories(scenario);
      const capacity = scenario.cluster.node.gpu.memoryBytes;
      const gpuFits = stages.every((s) => s.fits);
      const host = hostMemoryPerNode(scenario, stages);
      // One verdict for the whole job: the GPUs' memory and, with CPU offload, the hosts'.
      const fits = gpuFits && host?.fits !== false;
      const shortfallBytes = Math.max(...stages.map((s) => s.shortfallBytes));
      const leftOut = modelLeftOutNote(scenario.model);
      if (opts.json) {
        io.out(
          JSON.stringify(
            {
              version: VERSION,
              name: scenario.name,
              capacityBytes: capacity,
              fits,
              gpuFits,
              shortfallBytes,
              ...(scenario.training.optimizerState ? { optimizerState: scenario.training.optimizerState } : {}),
              stages,
              host,
              ...(imports.length > 0 ? { imports: importsJson(imports, opts.set) } : {}),
              ...(warnings.length > 0 ? { warnings } : {}),
              ...(leftOut ? { notModelled: scenario.model.notModelled } : {}),
              errorBand: memoryBandJson(),
            },
            null,
            2,
          ),
        );
        return;
      }
      const p = scenario.parallel;
      const rows = stages.map((s) => [
        s.stage,
        s.layers,
        `${(s.paramsHeldPerGpu / 1e9).toFixed(2)}B`,
        formatBytes(s.weightsBytes),
        formatBytes(s.gradientsBytes),
        formatBytes(s.optimizerBytes),
        `${formatBytes(s.activationsBytes)} (${s.passesInFlight})`,
        formatBytes(s.buffersBytes),
        formatBytes(s.reserveBytes),
        formatBytes(s.totalBytes),
        verdict(s, capacity),
      ]);
      const state = scenario.training.optimizerState;
      const stateText = state ? `, optimizer state ${describeOptimizerState(state)}` : '';
      io.out(
        [
          `${scenario.name}: ${scenario.model.name} on ${scenario.cluster.name}, ` +
            `${strategyText({ ...p, tpCommOverlap: p.tpCommOverlap !== undefined })}` +
            `${stateText}; ${formatBytes(capacity)} per GPU`,
          '',
          table(
            [
              'stage',
              'layers',
              'params/GPU',
              'weights',
              'gradients',
              'optimizer',
              'activations (passes in flight)',
              'buffers',
              'reserve',
              'total',
              'verdict',
            ],
            rows,
          ),
          '',
          gpuFits
            ? 'Every stage fits on its GPUs.'
            : `Does not fit: ${stages.filter((s) => !s.fits).length} of ${stages.length} stage(s) ` +
              `exceed ${formatBytes(capacity)}.`,
          ...(host ? [hostLine(host)] : []),
          ...(gpuFits && !fits
            ? ['Does not fit: the GPUs hold their share, the hosts do not hold the offloaded state.']
            : []),
          ...(p.tp > scenario.cluster.node.gpusPerNode
            ? [
                `Note: tp ${p.tp} exceeds the ${scenario.cluster.node.gpusPerNode} GPUs of a node, ` +
                  `so tensor-parallel collectives cross the NICs; \`clustersim simulate\` shows what that costs.`,
              ]
            : []),
          ...(p.zero === 3 ? [zero3GatherLine(p.zeroConfig.stage3 ?? 'fsdp')] : []),
          ...(leftOut ? wrapWords(`Note: ${leftOut}.`, 116) : []),
          ...wrapWords(`Error band: ${MEMORY_BAND_NOTE}.`, 116),
          ...describeImports(imports, opts.set),
        ].join('\n'),
      );
    });
}
