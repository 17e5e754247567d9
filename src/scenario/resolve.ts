import { ZodError } from 'zod';
import type { StepSetup } from '../sim/setup.js';
import type { ClusterSpec, GpuSpec, NetworkSpec, NodeSpec } from '../sim/hardware/types.js';
import { gpuPreset, networkPreset, nodePreset, nodePresetNames } from '../sim/hardware/presets.js';
import type { ModelSpec } from '../sim/workload/model.js';
import { modelPreset } from '../sim/workload/modelPresets.js';
import { modelFromHfConfig } from '../sim/workload/hfConfig.js';
import { ScenarioError } from '../sim/errors.js';
import { GiB } from '../sim/engine/units.js';
import { clusterSchema, modelSchema, scenarioSchema, type ScenarioInput } from './schema.js';
import { InvalidScenarioError, problemOf, type Problem } from './errors.js';
import { expectation, zodProblems } from './zodProblems.js';
import { defaultNetworkFor } from './defaultNetworks.js';
import { resolve as resolvePath } from 'node:path';
import { readStructuredFile } from './load.js';

/** A scenario with every preset looked up: plain data the simulator takes. */
export interface Scenario extends StepSetup {
  name: string;
  seed: number;
  cluster: ClusterSpec;
  model: ModelSpec;
  training: ScenarioInput['training'] & { seqLen: number };
  parallel: { dp: number; ddp: ScenarioInput['parallel']['ddp'] };
  comm: ScenarioInput['comm'];
}

function withOverrides<T extends object>(base: T, overrides: Record<string, unknown> | undefined, skip: string[] = ['preset']): T {
  const out = { ...base } as Record<string, unknown>;
  for (const [k, v] of Object.entries(overrides ?? {})) if (!skip.includes(k) && v !== undefined) out[k] = v;
  return out as T;
}

function resolveGpu(input: ScenarioInput['cluster']['gpu'], base: GpuSpec): GpuSpec {
  if (input === undefined) return base;
  if (typeof input === 'string') return gpuPreset(input, 'cluster.gpu');
  const start = input.preset ? gpuPreset(input.preset, 'cluster.gpu.preset') : base;
  const gpu = withOverrides(start, input, ['preset', 'memoryGiB', 'peakTflops', 'gemmCeiling']);
  if (input.memoryGiB !== undefined) gpu.memoryBytes = input.memoryGiB * GiB;
  if (input.peakTflops) gpu.peakTflops = { ...start.peakTflops, ...input.peakTflops };
  if (input.gemmCeiling) gpu.gemmCeiling = { ...start.gemmCeiling, ...input.gemmCeiling };
  if (input.name === undefined && input.preset === undefined) gpu.name = `${start.name} (modified)`;
  return gpu;
}

function resolveCluster(c: ScenarioInput['cluster']): ClusterSpec {
  const nodeName = c.node?.preset ?? c.preset;
  if (!nodeName) throw new ScenarioError('cluster.preset', `is required: name a node preset (one of: ${nodePresetNames().join(', ')}) and override its fields inline under cluster.node, cluster.gpu, cluster.network`);
  const baseNode = nodePreset(nodeName, c.node?.preset ? 'cluster.node.preset' : 'cluster.preset');
  const node: NodeSpec = withOverrides(baseNode, c.node);
  node.gpu = resolveGpu(c.gpu, baseNode.gpu);
  let network: NetworkSpec;
  if (typeof c.network === 'string') network = networkPreset(c.network, 'cluster.network');
  else {
    const netName = c.network?.preset ?? defaultNetworkFor(baseNode.name);
    network = withOverrides(networkPreset(netName, 'cluster.network.preset'), c.network);
  }
  if (node.intra === 'pcie' && node.nvls) throw new ScenarioError('cluster.node.nvls', 'NVLink SHARP needs an NVSwitch node (intra: nvswitch)');
  return { name: `${c.nodes}× ${node.name}`, node, nodes: c.nodes, network };
}

/** Reads a Hugging Face config.json named in the scenario; every problem with it is reported at `model.hfConfig`. */
function modelFromHfFile(hfConfig: string, baseDir: string): ModelSpec {
  const full = resolvePath(baseDir, hfConfig);
  try {
    return modelFromHfConfig(readStructuredFile(full, 'Hugging Face config'), hfConfig);
  } catch (err) {
    if (err instanceof ScenarioError) {
      const msg = err.path === hfConfig ? `'${hfConfig}': ${problemOf(err).message}` : err.message;
      throw new ScenarioError('model.hfConfig', `${msg} (paths are relative to the scenario file's folder, ${baseDir})`.replace(/ \(paths are .*$/, full === hfConfig ? '' : '$&'));
    }
    throw err;
  }
}

function resolveModel(m: ScenarioInput['model'], baseDir: string, source: string): ModelSpec {
  const { preset, hfConfig, ...inline } = m;
  if (preset && hfConfig) throw new ScenarioError('model', 'give either preset or hfConfig, not both');
  let base: ModelSpec | undefined;
  if (preset) base = modelPreset(preset, 'model.preset');
  else if (hfConfig) base = modelFromHfFile(hfConfig, baseDir);
  if (base) return withOverrides(base, inline);
  const missing: (keyof typeof inline)[] = (['arch', 'layers', 'hidden', 'seqLen', 'vocab'] as const).filter((k) => inline[k] === undefined);
  if (inline.arch !== 'mlp' && inline.heads === undefined) missing.push('heads');
  if (inline.arch === 'mlp' && inline.mlpSizes === undefined) missing.push('mlpSizes');
  if (missing.length > 0) {
    throw new InvalidScenarioError(
      source,
      missing.map((k) => ({ path: `model.${k}`, message: `is required when the model has no preset or hfConfig; expected ${expectation(modelSchema.shape[k])}` })),
    );
  }
  const arch = inline.arch!;
  const heads = inline.heads ?? 1;
  const hidden = inline.hidden!;
  return {
    name: inline.name ?? `custom-${arch}`,
    arch,
    layers: inline.layers!,
    hidden,
    heads,
    kvHeads: inline.kvHeads ?? heads,
    ffnHidden: inline.ffnHidden ?? 4 * hidden,
    seqLen: inline.seqLen!,
    vocab: inline.vocab!,
    tiedEmbeddings: inline.tiedEmbeddings ?? arch !== 'llama',
    mlpSizes: inline.mlpSizes,
  };
}

function checkModel(model: ModelSpec): Problem[] {
  const problems: Problem[] = [];
  if (model.arch !== 'mlp') {
    if (model.hidden % model.heads !== 0) problems.push({ path: 'model.heads', message: `${model.heads} does not divide hidden (${model.hidden})` });
    if (model.heads % model.kvHeads !== 0) problems.push({ path: 'model.kvHeads', message: `${model.kvHeads} does not divide heads (${model.heads})` });
  }
  return problems;
}

/** Validates and resolves a `cluster:` section on its own (for commands that need no model). */
export function resolveClusterSection(raw: unknown, source: string): ClusterSpec {
  const parsed = clusterSchema.safeParse(raw);
  if (!parsed.success) throw new InvalidScenarioError(source, zodProblems(parsed.error, 'cluster'));
  return resolveCluster(parsed.data);
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
    if (err instanceof ZodError) throw new InvalidScenarioError(source, zodProblems(err));
    throw err;
  }
  const cluster = resolveCluster(input.cluster);
  const model = resolveModel(input.model, baseDir);
  const problems = checkModel(model);
  const gpus = cluster.nodes * cluster.node.gpusPerNode;
  const dp = input.parallel.dp ?? gpus;
  if (dp !== gpus) problems.push({ path: 'parallel.dp', message: `${dp} does not match the cluster's ${gpus} GPUs (${cluster.nodes} nodes × ${cluster.node.gpusPerNode}); data parallelism must use every GPU` });
  const t = input.training;
  if (t.globalBatch % (t.microBatch * dp) !== 0) {
    problems.push({ path: 'training.globalBatch', message: `${t.globalBatch} is not divisible by microBatch × dp = ${t.microBatch} × ${dp} = ${t.microBatch * dp}` });
  }
  if (problems.length > 0) throw new InvalidScenarioError(source, problems);
  const seqLen = t.seqLen ?? model.seqLen;
  return {
    name: input.name ?? source.replace(/^.*\//, '').replace(/\.(ya?ml|json)$/, ''),
    seed: input.seed,
    cluster,
    model: { ...model, seqLen },
    training: { ...t, seqLen },
    parallel: { dp, ddp: input.parallel.ddp },
    comm: input.comm,
  };
}
