import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LibOutcome } from './cudaLibs.js';
import type { BenchItem, RawResult } from './types.js';

/**
 * Loads the native addon (native/, built by node-gyp at `npm ci`). Its functions return Promises resolved by
 * AsyncWorkers, so the event loop keeps running (progress bar, Ctrl-C) while a measurement takes seconds.
 */

/** Facts about the host CPU and the CPU GEMM kernel. */
export interface CpuInfo {
  model: string;
  logicalCores: number;
  l2Bytes?: number;
  l3Bytes?: number;
  memoryBytes: number;
  /** "avx2-fma" or "generic": which compiled micro-kernel runs. */
  gemmIsa: string;
  /** Output tile of the CPU GEMM (rows × columns). */
  gemmTile: { m: number; n: number };
}

export interface NativeAddon {
  abiVersion: number;
  cpuInfo(): CpuInfo;
  runCpu(item: BenchItem): Promise<RawResult>;
  /**
   * Correctness checks of the CPU kernels (for tests): `gemm` returns max |C − reference| / k against a plain
   * loop; a collective op returns the largest deviation from the exact result of one run on known data.
   */
  cpuCheck(
    args:
      | { what: 'gemm'; threads: number; m: number; n: number; k: number }
      | { what: 'all_reduce' | 'all_gather' | 'reduce_scatter'; ranks: number; floats: number },
  ): number;
  cudaLoad(requests: { name: string; paths: string[]; required: boolean }[]): LibOutcome[];
  /** Flat key → value strings: driverVersion, runtimeVersion, device.0.name, … Throws when no GPU is usable. */
  cudaDescribe(): Record<string, string>;
  runCuda(item: BenchItem): Promise<RawResult>;
}

/** The addon version this code speaks to (native/src/addon.cc exports the same number). */
export const NATIVE_ABI_VERSION = 1;

/** The native addon is missing or cannot be loaded; the message says why and what to do. */
export class NativeUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NativeUnavailableError';
  }
}

/** native/build/Release/clustersim_native.node of this package, or $CLUSTERSIM_NATIVE. */
export function addonPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CLUSTERSIM_NATIVE) return resolve(env.CLUSTERSIM_NATIVE);
  // This file is src/calibrate/native.ts or dist/calibrate/native.js: the package root is two folders up.
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  return resolve(root, 'native', 'build', 'Release', 'clustersim_native.node');
}

/** The message for an addon that is absent or fails to load. */
export function explainAddonFailure(path: string, exists: boolean, error?: unknown): string {
  const build = 'build it with `npm run build:native` (needs python3, make and a C++17 compiler; no CUDA needed)';
  if (!exists) return `the native addon is not built: ${path} does not exist; ${build}.`;
  const msg = error instanceof Error ? error.message : String(error);
  const hint = /NODE_MODULE_VERSION|invalid ELF|wrong ELF class|GLIBC|GLIBCXX/.test(msg)
    ? 'it was built for another Node.js version or system; rebuild it here'
    : 'rebuild it';
  return `the native addon at ${path} cannot be loaded: ${msg.split('\n')[0]}; ${hint}: ${build}.`;
}

let cached: NativeAddon | undefined;

/** Loads (once) and returns the addon; throws NativeUnavailableError with a message that says what to do. */
export function loadAddon(path = addonPath()): NativeAddon {
  if (cached) return cached;
  const exists = existsSync(path);
  if (!exists) throw new NativeUnavailableError(explainAddonFailure(path, false));
  let addon: NativeAddon;
  try {
    addon = createRequire(import.meta.url)(path) as NativeAddon;
  } catch (err) {
    throw new NativeUnavailableError(explainAddonFailure(path, true, err));
  }
  if (addon.abiVersion !== NATIVE_ABI_VERSION) {
    throw new NativeUnavailableError(
      `the native addon at ${path} is version ${addon.abiVersion}, this code needs ${NATIVE_ABI_VERSION}: ` +
        `rebuild it with \`npm run build:native\`.`,
    );
  }
  cached = addon;
  return addon;
}
