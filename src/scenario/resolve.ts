import type { Fp8Setup } from '../sim/workload/fp8.js';
import { fp8Problems, fp8SetupOf } from './fp8Checks.js';
import { ZodError } from 'zod';
import type { StepSetup } from '../sim/setup.js';
import type { ClusterSpec } from '../sim/hardware/types.js';
import type { ModelSpec } from '../sim/workload/model.js';
import {
  frameworkByName,
  MEGATRON_VOCAB_DIVISIBLE_BY,
  padVocab,
  type FrameworkSpec,
} from '../sim/workload/framework.js';
import { clusterSchema, modelSchema, scenarioSchema, type ScenarioInput } from './schema.js';
import { attempt, linkLatencyFields, resolveCluster } from './resolveCluster.js';
import { checkModel, resolveModel } from './resolveModel.js';
import { InvalidScenarioError, type Problem } from './errors.js';
import { zodProblems } from './zodProblems.js';
import { resolveMeasuredCollectives } from './measuredCollectives.js';
import { gpuTrainingProblems, learnedPositionsWarning } from './hardwareChecks.js';
import { simulationLimitProblems } from './simulationLimits.js';
import { checkParallel, optimizerStateProblems, tpCommOverlapProblems } from './parallelChecks.js';
import { moeProblems } from './moeChecks.js';
import { dispatcherProblems } from './dispatcherChecks.js';
import { nvlsUnavailable } from '../sim/collectives/collectiveService.js';
import type { MeasuredCollectiveTable } from '../sim/collectives/measuredTable.js';
import { isReducedOptimizerState } from '../sim/memory/optimizerState.js';

/** The vocabulary as the framework pads it (`training.vocabDivisibleBy`); an MLP has none. */
function frameworkVocab(model: ModelSpec, tp: number, divisibleBy: number): number {
  return model.arch === 'mlp' || divisibleBy <= 1 ? model.vocab : padVocab(model.vocab, tp, divisibleBy);
}

/** The framework with the scenario's measured host costs per call and per collective call, where it gives them. */
function withHostCosts(
  fw: FrameworkSpec | undefined,
  hostOpUs: number | undefined,
  hostCollectiveUs: number | undefined,
): FrameworkSpec | undefined {
  if (!fw) return fw;
  let out = fw;
  if (hostOpUs !== undefined)
    out = {
      ...out,
      hostOpNs: hostOpUs * 1e3,
      source: `${out.source}; host cost per call ${hostOpUs} µs from the scenario (training.hostOpUs)`,
    };
  if (hostCollectiveUs !== undefined) {
    out = {
      ...out,
      hostCollectiveNs: hostCollectiveUs * 1e3,
      source:
        `${out.source}; host cost per collective call ${hostCollectiveUs} µs from the scenario ` +
        '(training.hostCollectiveUs)',
    };
  }
  return out;
}

/** A scenario with every preset looked up: plain data the simulator takes. */
export interface Scenario extends StepSetup {
  name: string;
  seed: number;
  cluster: ClusterSpec;
  model: ModelSpec;
  training: Omit<ScenarioInput['training'], 'optimizerState' | 'fp8'> & {
    seqLen: number;
    optimizerState?: ScenarioInput['training']['optimizerState'];
    fp8?: Fp8Setup;
  };
  comm: Omit<ScenarioInput['comm'], 'measured'> & { measured: MeasuredCollectiveTable[] };
  /** What the user should know about values the scenario left to a default (printed as warnings); absent if none. */
  warnings?: string[];
}

/**
 * The training length taken for a Hugging Face config when the scenario gives none: a config states the longest
 * sequence the model takes (131,072 for Qwen2.5, whose first result would be a 647 GiB OOM), not the length it is
 * trained at. 4,096 is what most pretraining runs at: Llama 2's whole pretraining (Touvron et al. 2023, Table 1) and
 * Qwen2.5's first pretraining stage (Qwen2.5 technical report, arXiv 2412.15115: 4,096 tokens before its long-context
 * stage at 32,768).
 */
export const HF_DEFAULT_TRAINING_SEQ_LEN = 4096;

function hfSeqLenWarning(config: string, maxPositions: number, seqLen: number): string {
  const which =
    seqLen < maxPositions
      ? `using ${seqLen} tokens, the length most pretraining runs at, ` +
        `not the ${maxPositions} positions ${config} allows (max_position_embeddings or n_positions)`
      : `using the longest sequence ${config} allows (max_position_embeddings or n_positions, ${maxPositions})`;
  return (
    `training.seqLen not given: ${which}; it sets activation memory and step time, ` +
    'so give training.seqLen for the length you train with'
  );
}

/** Validates and resolves a `cluster:` section on its own (for commands that need no model). */
export function resolveClusterSection(raw: unknown, source: string): ClusterSpec {
  const parsed = clusterSchema.safeParse(raw);
  if (!parsed.success)
    throw new InvalidScenarioError(source, zodProblems(parsed.error, 'cluster', { schema: clusterSchema, input: raw }));
  const problems: Problem[] = [];
  const cluster = attempt(problems, () => resolveCluster(parsed.data, source));
  if (!cluster) throw new InvalidScenarioError(source, problems);
  return cluster;
}

/**
 * A raw scenario's model section resolved on its own (preset, Hugging Face config, inline sizes), for the importers
 * that need the model before the whole scenario is valid.
 * @throws ScenarioError (or InvalidScenarioError) when the section is not valid
 */
export function resolveModelSection(raw: unknown, baseDir: string, source: string): ModelSpec {
  const parsed = modelSchema.safeParse(raw);
  if (!parsed.success)
    throw new InvalidScenarioError(source, zodProblems(parsed.error, 'model', { schema: modelSchema, input: raw }));
  return resolveModel(parsed.data, baseDir, source);
}

/**
 * Validates a raw scenario and looks up its presets. Throws `InvalidScenarioError` listing every
 * schema problem, or a `ScenarioError` for the first semantic one.
 */
export function resolveScenario(raw: unknown, source: string, baseDir: string): Scenario {
  let input: ScenarioInput;
  try {
    input = scenarioSchema.parse(raw);
  } catch (err) {
    if (err instanceof ZodError)
      throw new InvalidScenarioError(source, zodProblems(err, '', { schema: scenarioSchema, input: raw }));
    throw err;
  }
  // Cluster and model are looked up independently, so a scenario with two bad presets hears of both.
  const problems: Problem[] = [];
  const cluster = attempt(problems, () => resolveCluster(input.cluster, source));
  const model = attempt(problems, () => resolveModel(input.model, baseDir, source));
  if (!cluster || !model) throw new InvalidScenarioError(source, problems);
  problems.push(...checkModel(model));
  const gpus = cluster.nodes * cluster.node.gpusPerNode;
  const par = input.parallel;
  const split = par.tp * par.cp * par.pp;
  const dp = par.dp ?? Math.max(1, Math.floor(gpus / split));
  problems.push(...checkParallel(par, dp, gpus, cluster.nodes, cluster.node.gpusPerNode, model, input.training));
  problems.push(...moeProblems(model, input, dp), ...dispatcherProblems(model, par, cluster.node));
  if (par.tpCommOverlap) problems.push(...tpCommOverlapProblems(par, cluster.node, input.training.framework, model));
  for (const [k, sms] of Object.entries(par.tpCommOverlapSms)) {
    if (par.tpCommOverlap && sms >= cluster.node.gpu.smCount)
      problems.push({
        path: `parallel.tpCommOverlapSms.${k}`,
        message:
          `${sms} SMs leave none of the ${cluster.node.gpu.name}'s ${cluster.node.gpu.smCount} to the GEMM; ` +
          'use fewer',
      });
  }
  const t = input.training;
  const unit = t.microBatch * dp;
  // With dp derived from a split that does not divide the GPUs, dp itself is wrong: the split's problem is enough.
  const dpKnown = par.dp !== undefined || gpus % split === 0;
  if (dpKnown && t.globalBatch % unit !== 0) {
    const below = Math.floor(t.globalBatch / unit) * unit;
    const nearest = below > 0 ? `${below} or ${below + unit}` : `${unit}`;
    problems.push({
      path: 'training.globalBatch',
      message:
        `${t.globalBatch} is not divisible by microBatch × dp = ${t.microBatch} × ${dp} = ${unit}; ` +
        `use a multiple of ${unit} (e.g. ${nearest}) or change training.microBatch`,
    });
  }
  for (const field of ['hostOpUs', 'hostCollectiveUs'] as const) {
    if (t[field] !== undefined && t.framework === 'none') {
      problems.push({
        path: `training.${field}`,
        message:
          "sets a host cost of the framework, but training.framework is 'none' (no host is modelled); " +
          `set training.framework (e.g. megatron-deepspeed) or leave ${field} out`,
      });
    }
  }
  problems.push(...optimizerStateProblems(t, par.offload));
  problems.push(...fp8Problems(t, par, model, cluster.node.gpu));
  const noNvls = input.comm.algorithm === 'nvls' ? nvlsUnavailable(cluster.node) : undefined;
  if (noNvls) problems.push({ path: 'comm.algorithm', message: noNvls });
  problems.push(...gpuTrainingProblems(cluster.node.gpu, t, par.cp ?? 1));
  const microBatches = t.globalBatch / unit;
  problems.push(...simulationLimitProblems(gpus, dpKnown ? microBatches : NaN, model.layers));
  if (
    dpKnown &&
    par.pp > 1 &&
    par.schedule === 'interleaved' &&
    Number.isInteger(microBatches) &&
    microBatches % par.pp !== 0
  ) {
    problems.push({
      path: 'training.globalBatch',
      message:
        `the interleaved schedule needs the micro-batches per step (${microBatches}) ` +
        `to be a multiple of pp (${par.pp}), as Megatron requires`,
    });
  }
  const measured = attempt(problems, () =>
    resolveMeasuredCollectives(input.comm.measured, baseDir, cluster.node, source),
  );
  const stage1 = par.zeroConfig.stage1 ?? (t.framework === 'megatron-deepspeed' ? 'deepspeed' : 'megatron');
  if (par.overlapParamGather && (par.zero !== 1 || stage1 !== 'megatron')) {
    problems.push({
      path: 'parallel.overlapParamGather',
      message:
        "overlaps the weight all-gather of Megatron's distributed optimizer, which needs zero 1 with " +
        `zeroConfig.stage1 megatron (not zero ${par.zero}${par.zero === 1 ? `, stage1 ${stage1}` : ''}); ` +
        'leave overlapParamGather off',
    });
  } else if (par.overlapParamGather && !par.zeroConfig.overlapComm) {
    // arguments.py: "Must use --overlap-param-gather with --overlap-grad-reduce".
    problems.push({
      path: 'parallel.overlapParamGather',
      message:
        'needs the gradient reduction overlapped too, as Megatron requires (--overlap-grad-reduce): ' +
        'set parallel.zeroConfig.overlapComm: true, or leave overlapParamGather off',
    });
  }
  if (problems.length > 0 || !measured) throw new InvalidScenarioError(source, problems);
  const lengthFromHf = t.seqLen === undefined && input.model.hfConfig !== undefined && input.model.seqLen === undefined;
  const seqLen = t.seqLen ?? (lengthFromHf ? Math.min(model.seqLen, HF_DEFAULT_TRAINING_SEQ_LEN) : model.seqLen);
  const warnings: string[] = [];
  if (lengthFromHf) warnings.push(hfSeqLenWarning(input.model.hfConfig!, model.seqLen, seqLen));
  const positions = learnedPositionsWarning(model, seqLen);
  if (positions) warnings.push(positions);
  if (par.zeroConfig.stage3 !== undefined && par.zero !== 3)
    warnings.push(`parallel.zeroConfig.stage3 is ignored: it says whose ZeRO-3 it is, and zero is ${par.zero}`);
  if (model.arch !== 'mlp' && model.kvHeads < model.heads && model.kvHeads % par.tp !== 0) {
    const how =
      par.tp % model.kvHeads === 0
        ? 'each TP rank is simulated with a copy of one, as inference engines replicate them'
        : `each TP rank is simulated with ${(model.kvHeads / par.tp).toFixed(2)} of them`;
    warnings.push(
      `parallel.tp ${par.tp} does not divide the model's ${model.kvHeads} key/value heads: ${how}; ` +
        'Megatron-LM refused it before core 0.16, and since then (NVIDIA/Megatron-LM#2565) ' +
        'all-gathers the QKV activations over TP instead, which is not modelled',
    );
  }
  // Only when the scenario asked for it: the schema's default is not the user's request.
  const overlapAsked =
    (raw as { parallel?: { zeroConfig?: { overlapComm?: unknown } } } | null)?.parallel?.zeroConfig?.overlapComm ===
    true;
  if (par.zero === 1 && stage1 === 'deepspeed' && par.pp > 1 && overlapAsked) {
    // deepspeed/runtime/engine.py _configure_zero_optimizer: "Pipeline parallelism does not support overlapped
    // communication".
    warnings.push(
      'parallel.zeroConfig.overlapComm: DeepSpeed turns overlap_comm off under pipeline parallelism, ' +
        'so its ZeRO-1 reduces the gradients after backward; simulated so',
    );
  }
  // The GPU's datasheet NVLink rate and PCIe generation are shown by `presets` but time nothing: the node's fields do.
  const gpuIn = input.cluster.gpu;
  if (typeof gpuIn === 'object' && gpuIn.nvlinkBandwidthGBps !== undefined)
    warnings.push(
      'cluster.gpu.nvlinkBandwidthGBps: ignored, the datasheet figure times nothing; NVLink transfers take the ' +
        'bandwidth NCCL reaches per GPU and direction, cluster.node.nvlinkBandwidthGBps: set that',
    );
  if (typeof gpuIn === 'object' && gpuIn.pcieGen !== undefined)
    warnings.push(
      'cluster.gpu.pcieGen: ignored, it times nothing; PCIe transfers take cluster.node.pcieBandwidthGBps: set that',
    );
  // Link latencies describe the wires, but every transfer is timed by NCCL's latency model (ncclTuning.ts: a base
  // plus hwLat per NVLink, PCIe or network hop, which is what NCCL measured those hops at), so they time nothing.
  for (const [field, given] of linkLatencyFields(input.cluster)) {
    if (given)
      warnings.push(
        `cluster.${field}: ignored, link latencies time nothing; collectives and point-to-point sends take NCCL's ` +
          'latency per hop (NVLink, PCIe or network), which counts the wire and switch latency already',
      );
  }
  if (par.pp > 1 && par.schedule !== 'interleaved' && par.virtualStages > 1) {
    warnings.push(
      `parallel.virtualStages ${par.virtualStages}: ignored, ` +
        `the ${par.schedule} schedule runs one model chunk per stage; set parallel.schedule: interleaved to use it`,
    );
  }
  return {
    ...(warnings.length > 0 ? { warnings } : {}),
    name: input.name ?? source.replace(/^.*[\\/]/, '').replace(/\.(ya?ml|json)$/, ''),
    seed: input.seed,
    cluster,
    model: {
      ...model,
      seqLen,
      vocab: frameworkVocab(
        model,
        par.tp,
        t.vocabDivisibleBy ?? (t.framework === 'megatron-deepspeed' ? MEGATRON_VOCAB_DIVISIBLE_BY : 1),
      ),
    },
    training: {
      ...t,
      seqLen,
      optimizerState: isReducedOptimizerState(t.optimizerState) ? t.optimizerState : undefined,
      fp8: fp8SetupOf(t),
      routing: t.routing,
    },
    parallel: {
      ...par,
      zeroConfig: {
        ...par.zeroConfig,
        stage1,
        ...(par.zero === 3
          ? { stage3: par.zeroConfig.stage3 ?? (t.framework === 'megatron-deepspeed' ? 'deepspeed' : 'fsdp') }
          : {}),
      },
      dp,
      cp: par.cp,
      cpCommType: par.cp > 1 ? par.cpCommType : undefined,
      tpCommOverlap: par.tpCommOverlap ? par.tpCommOverlapSms : undefined,
      schedule: par.pp > 1 ? par.schedule : '1f1b',
      virtualStages: par.pp > 1 && par.schedule === 'interleaved' ? par.virtualStages : 1,
    },
    comm: { ...input.comm, measured },
    noise: input.noise,
    framework: withHostCosts(frameworkByName(t.framework), t.hostOpUs, t.hostCollectiveUs),
    // Jitter makes replicas differ, so there is no symmetry to use.
    fidelity: input.noise.computeJitter > 0 ? 'full' : input.simulation.fidelity,
  };
}
