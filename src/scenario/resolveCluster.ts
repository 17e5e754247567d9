import type { ClusterSpec, GpuSpec, NetworkSpec, NodeSpec } from '../sim/hardware/types.js';
import { gpuPreset, networkPreset, nodePreset, nodePresetNames } from '../sim/hardware/presets.js';
import { ScenarioError } from '../sim/errors.js';
import { GiB } from '../sim/engine/units.js';
import { fullMesh } from '../sim/hardware/meshes.js';
import {
  ARCHITECTURE_TRAITS,
  architectureOf,
  architectureOfComputeCapability,
  traitsOf,
} from '../sim/hardware/architectures.js';
import type { ScenarioInput } from './schema.js';
import { InvalidScenarioError, problemOf, type Problem } from './errors.js';
import { defaultNetworkFor } from './defaultNetworks.js';
import { nicCountProblem } from './hardwareChecks.js';

/**
 * The cluster section of a scenario resolved: the node, GPU and network presets looked up and the inline fields laid
 * over them (a GPU of the scenario's own says whose kernel figures it inherits). Used by resolve.ts.
 */
export function withOverrides<T extends object>(
  base: T,
  overrides: Record<string, unknown> | undefined,
  skip: string[] = ['preset'],
): T {
  const out = { ...base } as Record<string, unknown>;
  for (const [k, v] of Object.entries(overrides ?? {})) if (!skip.includes(k) && v !== undefined) out[k] = v;
  return out as T;
}

export function resolveGpu(input: ScenarioInput['cluster']['gpu'], base: GpuSpec): GpuSpec {
  if (input === undefined) return base;
  if (typeof input === 'string') return gpuPreset(input, 'cluster.gpu');
  const start = startingGpu(input, base);
  const gpu = withOverrides(start, input, ['preset', 'memoryGiB', 'peakTflops', 'gemmCeiling']);
  if (input.memoryGiB !== undefined) gpu.memoryBytes = input.memoryGiB * GiB;
  if (input.peakTflops) gpu.peakTflops = { ...start.peakTflops, ...input.peakTflops };
  if (input.gemmCeiling) gpu.gemmCeiling = { ...start.gemmCeiling, ...input.gemmCeiling };
  if (input.name === undefined && input.preset === undefined) gpu.name = `${start.name} (modified)`;
  const inherited = inheritedKernelFigures(input, start);
  // A compute capability given without an architecture says the generation (a 10.0 GPU is Blackwell).
  if (input.computeCapability !== undefined && input.architecture === undefined)
    gpu.architecture = architectureOfComputeCapability(input.computeCapability);
  const fromReference = input.architecture && start.name === ARCHITECTURE_TRAITS[input.architecture].referenceGpu;
  if (input.preset === undefined && input.name !== undefined && input.name !== start.name && inherited.length > 0)
    gpu.kernelFiguresOf = {
      gpu: start.name,
      figures: inherited,
      ...(fromReference ? { architecture: input.architecture } : {}),
    };
  return gpu;
}

/**
 * The GPU a mapping builds on: its preset; else, where it names an architecture other than the node's GPU's, that
 * architecture's reference preset; else the node's GPU.
 */
function startingGpu(input: Exclude<ScenarioInput['cluster']['gpu'], string | undefined>, base: GpuSpec): GpuSpec {
  const named = input.architecture;
  if (input.preset) {
    const preset = gpuPreset(input.preset, 'cluster.gpu.preset');
    if (named && architectureOf(preset) !== named)
      throw new ScenarioError(
        'cluster.gpu.architecture',
        `is ${named}, but preset ${preset.name} is ${architectureOf(preset)}: drop one, or name a ${named} preset`,
      );
    return preset;
  }
  if (named === undefined || architectureOf(base) === named) return base;
  return gpuPreset(ARCHITECTURE_TRAITS[named].referenceGpu, 'cluster.gpu.architecture');
}

/** The fields that set how fast a GPU's kernels run, beyond its peaks and bandwidth. */
const KERNEL_FIGURE_FIELDS = [
  'gemmCeiling',
  'sustainedGemmFraction',
  'smCount',
  'computeCapability',
  'hbmEfficiency',
  'kernelLaunchNs',
] as const;

/** What a GPU mapping keeps of `start`'s kernel figures: the fields it leaves out, and the tables no field sets. */
function inheritedKernelFigures(input: Record<string, unknown>, start: GpuSpec): string[] {
  const fields: string[] = KERNEL_FIGURE_FIELDS.filter((k) => input[k] === undefined);
  if (start.attentionKernels) fields.push('attention-kernel figures');
  if (start.misalignedGemmSlowdown) fields.push('misaligned-GEMM slowdowns');
  return fields;
}

/**
 * The mesh of a node: the scenario's (`full`: every pair joined by one link), else the preset's, which a fully
 * connected preset mesh follows to another GPU count.
 */
function meshOf(
  input: NonNullable<ScenarioInput['cluster']['node']>['nvlinkMesh'],
  base: NodeSpec,
  gpus: number,
): NodeSpec['nvlinkMesh'] {
  if (input === 'full') return fullMesh(gpus);
  if (input !== undefined) return input;
  const preset = base.nvlinkMesh;
  const complete = preset !== undefined && preset.length === (base.gpusPerNode * (base.gpusPerNode - 1)) / 2;
  return complete && gpus !== base.gpusPerNode ? fullMesh(gpus, preset[0].links) : preset;
}

/**
 * The link latency fields of a cluster and whether the scenario gave each (a preset's own values are not warned of).
 */
export function linkLatencyFields(c: ScenarioInput['cluster']): [string, boolean][] {
  const node = typeof c.node === 'object' ? c.node : undefined;
  const network = typeof c.network === 'object' ? c.network : undefined;
  return [
    ['node.nvlinkLatencyNs', node?.nvlinkLatencyNs !== undefined],
    ['node.pcieLatencyNs', node?.pcieLatencyNs !== undefined],
    ['network.linkLatencyNs', network?.linkLatencyNs !== undefined],
  ];
}

/**
 * Runs `f`; a `ScenarioError` it throws becomes problems in `problems` and the result is undefined,
 * so independent parts of a scenario are all checked before anything is reported.
 */
export function attempt<T>(problems: Problem[], f: () => T): T | undefined {
  try {
    return f();
  } catch (err) {
    if (err instanceof InvalidScenarioError) problems.push(...err.problems);
    else if (err instanceof ScenarioError) problems.push(problemOf(err));
    else throw err;
    return undefined;
  }
}

export function resolveCluster(c: ScenarioInput['cluster'], source: string): ClusterSpec {
  const nodeName = c.node?.preset ?? c.preset;
  if (!nodeName)
    throw new ScenarioError(
      'cluster.preset',
      `is required: name a node preset (one of: ${nodePresetNames().join(', ')}) ` +
        'and override its fields inline under cluster.node, cluster.gpu, cluster.network',
    );
  const problems: Problem[] = [];
  const baseNode = attempt(problems, () =>
    nodePreset(nodeName, c.node?.preset ? 'cluster.node.preset' : 'cluster.preset'),
  );
  // With an unknown node there is no GPU to start from, but a GPU preset named in full can still be checked.
  const gpu = attempt(problems, () =>
    baseNode
      ? resolveGpu(c.gpu, baseNode.gpu)
      : typeof c.gpu === 'string'
        ? gpuPreset(c.gpu, 'cluster.gpu')
        : c.gpu?.preset
          ? gpuPreset(c.gpu.preset, 'cluster.gpu.preset')
          : undefined,
  );
  const network = attempt(problems, (): NetworkSpec => {
    if (typeof c.network === 'string') return networkPreset(c.network, 'cluster.network');
    const netName = c.network?.preset ?? defaultNetworkFor(nodeName);
    return withOverrides(networkPreset(netName, 'cluster.network.preset'), c.network);
  });
  if (!baseNode || !gpu || !network) throw new InvalidScenarioError(source, problems);
  const node: NodeSpec = withOverrides(baseNode, c.node, ['preset', 'hostMemoryGiB', 'nvlinkMesh']);
  if (c.node?.hostMemoryGiB !== undefined) node.hostMemoryBytes = c.node.hostMemoryGiB * GiB;
  const mesh = meshOf(c.node?.nvlinkMesh, baseNode, node.gpusPerNode);
  if (mesh !== node.nvlinkMesh) node.nvlinkMesh = mesh;
  node.gpu = gpu;
  const traits = traitsOf(gpu);
  if (node.nvls && traits.vendor !== 'nvidia')
    throw new ScenarioError(
      'cluster.node.nvls',
      `NVLink SHARP is an NVIDIA NVSwitch feature and ${gpu.name} is ${traits.label} (RCCL has no in-switch ` +
        'reduction); set cluster.node.nvls: false, or start from an AMD node preset (mi300x-8gpu, mi355x-8gpu)',
    );
  if (node.intra === 'pcie' && node.nvls)
    throw new ScenarioError(
      'cluster.node.nvls',
      'NVLink SHARP needs an NVSwitch node (intra: nvswitch); set it to false or use an NVSwitch node preset',
    );
  // NVLink of no bandwidth would carry every transfer inside the node in no time.
  if (node.intra !== 'pcie' && node.gpusPerNode > 1 && node.nvlinkBandwidthGBps === 0) {
    throw new ScenarioError(
      'cluster.node.nvlinkBandwidthGBps',
      `is 0, but the GPUs of this node talk over NVLink (intra: ${node.intra}); ` +
        'give its bandwidth per GPU and direction, or set cluster.node.intra: pcie for a node without NVLink',
    );
  }
  const nicProblem = nicCountProblem(node.gpusPerNode, node.nicsPerNode);
  if (nicProblem) throw new ScenarioError('cluster.node.nicsPerNode', nicProblem);
  // A GPU other than the node preset's is named, or the header would show the preset's GPU beside another's memory.
  const gpuNote = gpu !== baseNode.gpu ? ` with ${gpu.name}` : '';
  return { name: `${c.nodes}× ${node.name}${gpuNote}`, node, nodes: c.nodes, network };
}
