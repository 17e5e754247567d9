import { GPU_PRESETS } from '../sim/hardware/gpus.js';
import { IB_NDR } from '../sim/hardware/networks.js';
import type { ClusterSpec, Dtype, GpuSpec, MeasuredGemm, NodeSpec } from '../sim/hardware/types.js';
import type { CommSetup } from '../sim/setup.js';
import type { GemmFit } from './fitGemm.js';
import type { CollectiveFit, Profile } from './profile.js';
import type { MeasuredCollectiveTable } from '../sim/collectives/measuredTable.js';
import { MEASURED_COLLECTIVES, type MeasuredCollective } from './types.js';
import { valueOf } from './stats.js';
import { parseCollectiveId } from './plan.js';

/**
 * Builds the simulator's hardware specs from a profile: the measured constants replace the preset's for what
 * the profile describes (GEMM model per measured dtype, launch overhead, streaming-memory bandwidth, and,
 * where measured, the intra-node link bandwidth of collectives and the host↔device PCIe bandwidth).
 * Everything else stays the preset's. Each replacement is listed in `applied`, for the user to see.
 */

/** The GPU preset a device name stands for ("NVIDIA H200" → h200-sxm-141gb), or undefined. */
export function matchGpuPreset(deviceName: string, memoryBytes = 0): string | undefined {
  const n = deviceName.toLowerCase();
  if (n.includes('h200')) return 'h200-sxm-141gb';
  if (n.includes('h100') && !n.includes('pcie')) return 'h100-sxm5-80gb';
  if (n.includes('a100'))
    return n.includes('pcie')
      ? 'a100-pcie-40gb'
      : memoryBytes > 60 * 2 ** 30 || n.includes('80g')
        ? 'a100-sxm4-80gb'
        : 'a100-sxm4-40gb';
  if (n.includes('v100')) return 'v100-sxm2-32gb';
  return undefined;
}

/** The model fields of a GEMM fit (without its fit statistics), as GpuSpec.measuredGemm holds them. */
export function measuredGemmOf(fit: GemmFit): MeasuredGemm {
  const m: MeasuredGemm = {
    tileM: fit.tileM,
    tileN: fit.tileN,
    units: fit.units,
    splitKMinK: fit.splitKMinK,
    ceilingTflops: fit.ceilingTflops,
    smallKHalf: fit.smallKHalf,
  };
  if (fit.corrections) m.corrections = fit.corrections;
  return m;
}

function measuredGemms(profile: Profile): Partial<Record<Dtype, MeasuredGemm>> {
  const out: Partial<Record<Dtype, MeasuredGemm>> = {};
  for (const [dtype, fit] of Object.entries(profile.fit.gemm)) if (fit) out[dtype as Dtype] = measuredGemmOf(fit);
  return out;
}

function calibratedNote(profile: Profile): string {
  return (
    `calibrated by clustersim ${profile.tool.version} on ${profile.machine.hostname} (${profile.device.name}), ` +
    `${profile.createdAt}`
  );
}

/** The CPU as the simulator's "GPU": its fp32 GEMM, memcpy bandwidth, dispatch overhead and threads. */
function cpuDevice(profile: Profile): GpuSpec {
  const f = profile.fit;
  const gemm = measuredGemms(profile);
  return {
    name: `cpu: ${profile.device.name}`,
    peakTflops: { fp32: f.gemm.fp32?.ceilingTflops ?? 0.01 },
    gemmCeiling: { fp32: 1 },
    memoryBytes: profile.machine.cpu.memoryBytes,
    hbmBandwidthGBps: f.memoryBandwidthGBps,
    hbmEfficiency: 1,
    smCount: profile.machine.computeThreads ?? 1,
    nvlinkBandwidthGBps: 0,
    pcieGen: 4,
    kernelLaunchNs: f.launchS * 1e9,
    measuredGemm: gemm,
    calibratedCpu: true,
    source: calibratedNote(profile),
  };
}

/**
 * The GPU the profile describes, starting from `base` (the scenario's GPU) or else the matching preset.
 * A CPU profile describes the CPU itself, so it replaces the GPU whole.
 */
export function profileGpu(profile: Profile, base?: GpuSpec): { gpu: GpuSpec; applied: string[] } {
  const f = profile.fit;
  if (profile.backend === 'cpu') {
    const gpu = cpuDevice(profile);
    return {
      gpu,
      applied: [
        `GPU replaced by the calibrated CPU device '${gpu.name}' (fp32 only, ${gpu.smCount} compute thread(s))`,
      ],
    };
  }
  const start = base ?? (profile.device.gpuPreset ? GPU_PRESETS[profile.device.gpuPreset] : undefined);
  const applied: string[] = [];
  const gpu: GpuSpec = start
    ? { ...start, peakTflops: { ...start.peakTflops }, gemmCeiling: { ...start.gemmCeiling } }
    : {
        ...cpuDevice(profile),
        name: profile.device.name,
        peakTflops: {},
        smCount: profile.machine.cuda?.devices[0]?.smCount ?? 1,
        // Its generation (NCCL's tuning row, TE features) follows the device's compute capability (architectures.ts).
        ...computeCapabilityOf(profile.machine.cuda?.devices[0]?.computeCapability),
        calibratedCpu: undefined,
      };
  const gemm = measuredGemms(profile);
  gpu.measuredGemm = { ...gpu.measuredGemm, ...gemm };
  for (const [dtype, m] of Object.entries(gemm)) {
    if (gpu.peakTflops[dtype as Dtype] === undefined) gpu.peakTflops[dtype as Dtype] = m.ceilingTflops;
    applied.push(`gemm ${dtype}: measured model (${m.ceilingTflops.toFixed(1)} TFLOP/s on full waves)`);
  }
  applied.push(`kernel launch overhead ${gpu.kernelLaunchNs} → ${Math.round(f.launchS * 1e9)} ns`);
  gpu.kernelLaunchNs = f.launchS * 1e9;
  const nominal = gpu.hbmBandwidthGBps;
  if (f.memoryBandwidthGBps > nominal) gpu.hbmBandwidthGBps = f.memoryBandwidthGBps;
  gpu.hbmEfficiency = Math.min(1, f.memoryBandwidthGBps / gpu.hbmBandwidthGBps);
  applied.push(
    `streaming memory bandwidth ${f.memoryBandwidthGBps.toFixed(0)} GB/s ` +
      `(efficiency ${gpu.hbmEfficiency.toFixed(3)} of ${gpu.hbmBandwidthGBps.toFixed(0)} GB/s)`,
  );
  gpu.name = `${gpu.name} (calibrated)`;
  gpu.source = `${gpu.source}; ${calibratedNote(profile)}`;
  return { gpu, applied };
}

/** The collective fit the node's link bandwidth comes from: all-reduce over the most ranks measured. */
export function linkFit(profile: Profile): CollectiveFit | undefined {
  const ar = profile.fit.collectives.filter((c) => c.op === 'all_reduce');
  return ar.sort((a, b) => b.ranks - a.ranks)[0];
}

/** `node` with the profile's GPU and, where measured, its link bandwidths. */
export function profileNode(profile: Profile, node: NodeSpec): { node: NodeSpec; applied: string[] } {
  const { gpu, applied } = profileGpu(profile, node.gpu);
  const out: NodeSpec = { ...node, gpu };
  const link = linkFit(profile);
  if (link && node.intra !== 'pcie') {
    // With a ring over the node's GPUs, all_reduce_perf's bus bandwidth is the per-GPU link bandwidth NCCL gets.
    applied.push(
      `intra-node link bandwidth ${node.nvlinkBandwidthGBps} → ${link.busBandwidthGBps.toFixed(1)} GB/s ` +
        `(all-reduce bus bandwidth over ${link.ranks})`,
    );
    out.nvlinkBandwidthGBps = link.busBandwidthGBps;
  }
  const h2d = profile.fit.copies['h2d-pinned'];
  if (h2d) {
    applied.push(
      `PCIe bandwidth ${node.pcieBandwidthGBps} → ${h2d.bandwidthGBps.toFixed(1)} GB/s (pinned host-to-device copies)`,
    );
    out.pcieBandwidthGBps = h2d.bandwidthGBps;
  }
  return { node: out, applied };
}

/** `cluster` with the profile applied to its node. */
export function profileCluster(profile: Profile, cluster: ClusterSpec): { cluster: ClusterSpec; applied: string[] } {
  const { node, applied } = profileNode(profile, cluster.node);
  // The name says whose devices run it: a CPU profile's, or the calibrated GPU's. A cluster whose GPU is not its node
  // preset's is already named '… with <gpu>' (resolve.ts): that GPU is the one replaced, so its name goes.
  const swapped = ` with ${cluster.node.gpu.name}`;
  const base = cluster.name.endsWith(swapped) ? cluster.name.slice(0, -swapped.length) : cluster.name;
  return { cluster: { ...cluster, name: `${base} with ${node.gpu.name}`, node }, applied };
}

/**
 * A one-node cluster of `ranks` calibrated devices, each with one link of `busBandwidthGBps` to a switch, so a
 * ring over them gets exactly that bus bandwidth (as the measured collective did). For validation.
 */
export function measuredGroupCluster(profile: Profile, ranks: number, busBandwidthGBps: number): ClusterSpec {
  const { gpu } = profileGpu(profile);
  const node: NodeSpec = {
    name: `${profile.device.name} ×${ranks} (calibrated)`,
    gpu,
    gpusPerNode: ranks,
    intra: 'nvswitch',
    nvlinkBandwidthGBps: busBandwidthGBps,
    nvlinkLatencyNs: 0,
    nvls: false,
    pcieBandwidthGBps: profile.fit.copies['h2d-pinned']?.bandwidthGBps ?? profile.fit.memoryBandwidthGBps / 2,
    pcieLatencyNs: 0,
    gpusPerPcieSwitch: ranks,
    interSocketBandwidthGBps: 100,
    nicsPerNode: 1,
    hostAdamParamsPerS: 1e9,
    source: calibratedNote(profile),
  };
  return { name: node.name, node, nodes: 1, network: IB_NDR };
}

/**
 * The profile's collective measurements as measured tables (`comm.measured`): one per op and group size,
 * each size at the statistic the fit used. `simulate --profile` then times calls of those ops and group sizes
 * inside one node by the machine's own measurements, as a nccl-tests table would.
 */
export function profileCollectiveTables(profile: Profile, source = 'profile'): MeasuredCollectiveTable[] {
  const byKey = new Map<string, MeasuredCollectiveTable & { points: { bytes: number; timeNs: number }[] }>();
  for (const m of profile.measurements) {
    const id = parseCollectiveId(m.id);
    if (!id || !MEASURED_COLLECTIVES.includes(id.op as MeasuredCollective)) continue;
    const { op, ranks, bytes } = id;
    const timeNs = valueOf(m, profile.statistic) * 1e9;
    if (!(ranks >= 2 && bytes > 0 && timeNs > 0)) continue;
    const key = `${op}/${ranks}`;
    let t = byKey.get(key);
    if (!t)
      byKey.set(
        key,
        (t = {
          op: op as MeasuredCollective,
          ranks,
          points: [],
          source: `${source} (${profile.device.name}, ${profile.createdAt})`,
        }),
      );
    t.points.push({ bytes, timeNs });
  }
  const tables = [...byKey.values()];
  for (const t of tables) t.points.sort((a, b) => a.bytes - b.bytes);
  return tables;
}

/** `scenario` with `profile`'s constants in place of its GPU's and links', and what was replaced. */
export function withProfile<T extends { cluster: ClusterSpec; comm: CommSetup }>(
  scenario: T,
  profile: Profile,
  path: string,
): { scenario: T; applied: string[] } {
  const { cluster, applied } = profileCluster(profile, scenario.cluster);
  // The scenario's own tables win over the profile's for the same op and group size.
  const own = scenario.comm.measured ?? [];
  const added = profileCollectiveTables(profile, path).filter(
    (t) => t.ranks <= cluster.node.gpusPerNode && !own.some((o) => o.op === t.op && o.ranks === t.ranks),
  );
  if (added.length > 0)
    applied.push(
      'measured collectives inside a node: ' +
        `${added.map((t) => `${t.op} ×${t.ranks} (${t.points.length} sizes)`).join(', ')}`,
    );
  return { scenario: { ...scenario, cluster, comm: { ...scenario.comm, measured: [...own, ...added] } }, applied };
}

/** A CUDA device's compute capability ("9.0") as a GpuSpec field; none when it does not read as a number. */
function computeCapabilityOf(text: string | undefined): { computeCapability?: number } {
  const cc = Number(text);
  return text && Number.isFinite(cc) && cc > 0 ? { computeCapability: cc } : {};
}
