import { hostname, platform, release, arch } from 'node:os';
import {
  CPU_BACKEND_HINT,
  CUDA_LIBS,
  candidatesFor,
  explainLoadFailure,
  optionalMissing,
  searchDirs,
  type SearchEnv,
} from './cudaLibs.js';
import { loadAddon, type CpuInfo, type NativeAddon } from './native.js';
import { gatherSearchEnv } from './searchEnv.js';
import type { BackendKind, BenchItem, CpuClockMode, RawResult } from './types.js';

/** A backend cannot run here; the message names what is missing and what to do. */
export class BackendUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackendUnavailableError';
  }
}

export interface GpuInfo {
  index: number;
  name: string;
  memoryBytes: number;
  smCount: number;
  computeCapability: string;
}

/** What the profile records about the machine a calibration ran on. */
export interface MachineInfo {
  hostname: string;
  os: string;
  arch: string;
  node: string;
  cpu: Omit<CpuInfo, 'gemmTile'>;
  /** CPU backend: threads a GEMM runs on (the "SMs"). */
  computeThreads?: number;
  /** CPU backend: how samples were timed. */
  cpuClock?: CpuClockMode;
  cuda?: {
    driverVersion?: string;
    runtimeVersion?: string;
    cublasVersion?: string;
    cublasLtVersion?: string;
    ncclVersion?: string;
    /** Files the libraries were loaded from. */
    libraries: Record<string, string>;
    devices: GpuInfo[];
    /** NCCL_* variables in effect (they change which algorithms NCCL runs). */
    ncclEnv: Record<string, string>;
  };
}

export interface Backend {
  kind: BackendKind;
  machine: MachineInfo;
  /** GPUs (cuda) or threads (cpu) a collective can span. */
  maxRanks: number;
  /** CPU GEMM output tile, or undefined for cuBLAS (which picks its own). */
  gemmTile?: { m: number; n: number };
  run(item: BenchItem): Promise<RawResult>;
}

function baseMachine(cpu: CpuInfo): MachineInfo {
  const { gemmTile: _tile, ...rest } = cpu;
  return { hostname: hostname(), os: `${platform()} ${release()}`, arch: arch(), node: process.version, cpu: rest };
}

/** The clock the CPU backend times `item` with (see CpuClockMode); an item may ask for the wall clock itself. */
export function cpuClockFor(
  item: Pick<BenchItem, 'kind' | 'clock'>,
  threads: number,
  mode: CpuClockMode,
): 'wall' | 'thread' {
  if (mode === 'wall') return 'wall';
  if (item.clock) return item.clock;
  switch (item.kind) {
    case 'copy':
      return 'thread';
    case 'gemm':
    case 'launch':
      return threads === 1 ? 'thread' : 'wall';
    case 'program':
      // With copies: the critical path of the ops' thread CPU times (native/src/cpu_program.cc).
      return threads === 1 ? 'thread' : 'wall';
    case 'collective':
      // Each rank's own CPU time, the slowest rank's per sample (native/src/cpu_collectives.cc).
      return 'thread';
  }
}

function threadsRefusal(threads: number, cores: number): string {
  return (
    `${threads} GEMM threads are more than the ${cores} logical cores here: the threads would share cores, ` +
    `and the GEMM rate measured would not be that of ${threads} units; give --threads ${cores} or fewer`
  );
}

/**
 * The CPU backend: GEMMs on `computeThreads` threads (default: all cores but one, left to the copy thread). More
 * threads than logical cores is refused: they would share cores, and the GEMM model, which runs tiles in waves over
 * that many units, would fit a ceiling many times what was measured (99 threads on 2 cores: 9.7 TFLOP/s from GEMMs
 * that ran at 0.06).
 * @param tooMany the refusal's words for the caller, given the threads and the cores (default: calibrate's `--threads`)
 * @throws BackendUnavailableError for more threads than logical cores
 */
export function openCpuBackend(
  addon: NativeAddon = loadAddon(),
  computeThreads?: number,
  clock: CpuClockMode = 'auto',
  tooMany: (threads: number, cores: number) => string = threadsRefusal,
): Backend {
  const cpu = addon.cpuInfo();
  const threads = computeThreads ?? Math.max(1, cpu.logicalCores - 1);
  if (threads > cpu.logicalCores) throw new BackendUnavailableError(tooMany(threads, cpu.logicalCores));
  return {
    kind: 'cpu',
    machine: { ...baseMachine(cpu), computeThreads: threads, cpuClock: clock },
    maxRanks: Math.max(2, Math.min(8, cpu.logicalCores)),
    gemmTile: cpu.gemmTile,
    // Collectives ignore `threads`: their ranks are threads of their own.
    run: (item) => addon.runCpu({ ...item, threads, clock: cpuClockFor(item, threads, clock) }),
  };
}

function ncclEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(([k, v]) => k.startsWith('NCCL_') && v !== undefined) as [string, string][],
  );
}

/** Turns cudaDescribe's flat strings into devices. */
export function parseCudaDescription(d: Record<string, string>): {
  devices: GpuInfo[];
  versions: Record<string, string>;
} {
  const count = Number(d.deviceCount ?? 0);
  const devices: GpuInfo[] = [];
  for (let i = 0; i < count; i++) {
    const p = `device.${i}.`;
    devices.push({
      index: i,
      name: d[`${p}name`] ?? 'unknown',
      memoryBytes: Number(d[`${p}memoryBytes`] ?? 0),
      smCount: Number(d[`${p}smCount`] ?? 0),
      computeCapability: d[`${p}computeCapability`] ?? '',
    });
  }
  const versions = Object.fromEntries(Object.entries(d).filter(([k]) => k.endsWith('Version')));
  return { devices, versions };
}

/** The CUDA backend: opens the libraries, describes the GPUs; throws BackendUnavailableError saying why not. */
export function openCudaBackend(
  addon: NativeAddon = loadAddon(),
  env: SearchEnv = gatherSearchEnv(),
  warn: (s: string) => void = () => {},
  otherwise = CPU_BACKEND_HINT,
): Backend {
  const dirs = searchDirs(env);
  const outcomes = addon.cudaLoad(
    CUDA_LIBS.map((l) => ({
      name: l.name,
      required: l.required,
      paths: candidatesFor(l, env, dirs).map((c) => c.path),
    })),
  );
  if (outcomes.some((o) => o.required && !o.path))
    throw new BackendUnavailableError(explainLoadFailure(outcomes, dirs, otherwise));
  const libraries = Object.fromEntries(outcomes.filter((o) => o.path).map((o) => [o.name, o.path as string]));
  let description: Record<string, string>;
  try {
    description = addon.cudaDescribe();
  } catch (err) {
    throw new BackendUnavailableError(
      `the CUDA libraries loaded (libcudart from ${libraries.cudart}), but no GPU is usable: ` +
        `${(err as Error).message}. Check that \`nvidia-smi\` lists a GPU and that CUDA_VISIBLE_DEVICES does not ` +
        `hide it; ${otherwise}.`,
    );
  }
  const { devices, versions } = parseCudaDescription(description);
  if (devices.length === 0)
    throw new BackendUnavailableError(
      'the CUDA libraries loaded, but they see no GPU (cudaGetDeviceCount = 0); ' +
        `check nvidia-smi and CUDA_VISIBLE_DEVICES; ${otherwise}.`,
    );
  for (const line of optionalMissing(outcomes)) warn(line);
  if (devices.length > 1 && !libraries.nccl) warn('without libnccl the collectives between GPUs are not measured');
  return {
    kind: 'cuda',
    machine: {
      ...baseMachine(addon.cpuInfo()),
      cuda: { ...versions, libraries, devices, ncclEnv: ncclEnv(process.env) },
    },
    maxRanks: libraries.nccl ? devices.length : 1,
    run: (item) => addon.runCuda(item),
  };
}

/**
 * Opens the backend asked for. `auto` tries CUDA and falls back to the CPU, telling `warn` why; `cuda` fails
 * with the reason; `cpu` always works once the addon is built.
 */
export function openBackend(
  requested: BackendKind | 'auto',
  opts: { threads?: number; clock?: CpuClockMode; warn?: (s: string) => void } = {},
): Backend {
  const warn = opts.warn ?? (() => {});
  const addon = loadAddon();
  if (requested === 'cpu') return openCpuBackend(addon, opts.threads, opts.clock);
  try {
    return openCudaBackend(addon, gatherSearchEnv(), warn);
  } catch (err) {
    if (requested === 'cuda' || !(err instanceof BackendUnavailableError)) throw err;
    warn(`using the CPU backend: ${err.message.split('\n')[0]}`);
    return openCpuBackend(addon, opts.threads, opts.clock);
  }
}
