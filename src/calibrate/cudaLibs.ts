/**
 * Where the CUDA backend looks for its libraries, in order: CLUSTERSIM_CUDA_LIBS (folders), LD_LIBRARY_PATH,
 * the loader cache (`ldconfig -p`), /usr/local/cuda*\/lib64 (and CUDA_HOME), Python's site-packages/nvidia/*\/lib
 * (pip wheels such as nvidia-cublas-cu12, which PyTorch images use), and finally the bare soname so dlopen's
 * own search (RUNPATH, ld.so.conf) gets a turn. Pure functions over a `SearchEnv`, so tests need no GPU.
 */

export type CudaLibName = 'cudart' | 'cublasLt' | 'cublas' | 'nccl' | 'cuda';

export interface CudaLibSpec {
  name: CudaLibName;
  /** File name without version: libcudart.so. */
  base: string;
  /** Sonames dlopen may find by itself, newest first. */
  sonames: string[];
  required: boolean;
  /** What the backend uses it for. */
  purpose: string;
  /** Where it usually comes from. */
  installHint: string;
}

/** Load order matters: libcublas needs libcublasLt, which is then found already loaded by soname. */
export const CUDA_LIBS: readonly CudaLibSpec[] = [
  {
    name: 'cudart',
    base: 'libcudart.so',
    sonames: ['libcudart.so.13', 'libcudart.so.12', 'libcudart.so.11.0', 'libcudart.so'],
    required: true,
    purpose: 'CUDA runtime: memory, streams, events, copies',
    installHint: 'pip install nvidia-cuda-runtime-cu12, or the CUDA toolkit',
  },
  {
    name: 'cublasLt',
    base: 'libcublasLt.so',
    sonames: ['libcublasLt.so.13', 'libcublasLt.so.12', 'libcublasLt.so.11', 'libcublasLt.so'],
    required: true,
    purpose: 'cuBLASLt, which cuBLAS needs',
    installHint: 'pip install nvidia-cublas-cu12, or the CUDA toolkit',
  },
  {
    name: 'cublas',
    base: 'libcublas.so',
    sonames: ['libcublas.so.13', 'libcublas.so.12', 'libcublas.so.11', 'libcublas.so'],
    required: true,
    purpose: 'cuBLAS: the GEMM benchmarks',
    installHint: 'pip install nvidia-cublas-cu12, or the CUDA toolkit',
  },
  {
    name: 'nccl',
    base: 'libnccl.so',
    sonames: ['libnccl.so.2', 'libnccl.so'],
    required: false,
    purpose: 'NCCL: collectives over several GPUs',
    installHint: 'pip install nvidia-nccl-cu12, or the libnccl2 package',
  },
  {
    name: 'cuda',
    base: 'libcuda.so',
    sonames: ['libcuda.so.1', 'libcuda.so'],
    required: false,
    purpose: 'CUDA driver API: device names and an empty kernel for launch latency',
    installHint: 'it comes with the NVIDIA driver',
  },
];

/** What the search looks at; `listDir` returns a folder's entries, or undefined when it does not exist. */
export interface SearchEnv {
  extraDirs: string[];
  ldLibraryPath: string;
  /** Output of `ldconfig -p` ('' when unavailable). */
  ldconfigOutput: string;
  /** CUDA installation roots (/usr/local/cuda, /usr/local/cuda-12.4, $CUDA_HOME). */
  cudaHomes: string[];
  /** Python site-packages folders. */
  sitePackages: string[];
  listDir(dir: string): string[] | undefined;
}

/** A folder searched and why. */
export interface SearchDir {
  dir: string;
  source: string;
}

export interface Candidate {
  path: string;
  source: string;
}

/** Version numbers after `.so`, for newest-first ordering: libcudart.so.12.4.127 → [12, 4, 127]. */
function versionOf(file: string, base: string): number[] {
  return file.slice(base.length).split('.').filter(Boolean).map(Number);
}

function newestFirst(base: string) {
  return (a: string, b: string): number => {
    const va = versionOf(a, base);
    const vb = versionOf(b, base);
    for (let i = 0; i < Math.max(va.length, vb.length); i++) {
      const d = (vb[i] ?? -1) - (va[i] ?? -1);
      if (d !== 0) return d;
    }
    return 0;
  };
}

/** Folders to search, in order, without duplicates. */
export function searchDirs(env: SearchEnv): SearchDir[] {
  const out: SearchDir[] = [];
  const add = (dir: string, source: string) => {
    const d = dir.replace(/\/+$/, '');
    if (d && !out.some((o) => o.dir === d)) out.push({ dir: d, source });
  };
  for (const d of env.extraDirs) add(d, 'CLUSTERSIM_CUDA_LIBS');
  for (const d of env.ldLibraryPath.split(':')) add(d, 'LD_LIBRARY_PATH');
  for (const home of env.cudaHomes)
    for (const sub of ['lib64', 'lib', 'targets/x86_64-linux/lib'])
      if (env.listDir(`${home}/${sub}`)) add(`${home}/${sub}`, `${home}`);
  for (const site of env.sitePackages) {
    for (const pkg of env.listDir(`${site}/nvidia`) ?? []) {
      for (const sub of ['lib', 'lib64'])
        if (env.listDir(`${site}/nvidia/${pkg}/${sub}`)) add(`${site}/nvidia/${pkg}/${sub}`, 'python site-packages');
    }
  }
  return out;
}

/** Paths of `base` the loader cache lists (`ldconfig -p` lines: `\tlibcudart.so.12 (libc6,x86-64) => /path`). */
export function fromLoaderCache(ldconfigOutput: string, base: string): string[] {
  const hits: string[] = [];
  for (const line of ldconfigOutput.split('\n')) {
    const m = /^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$/.exec(line);
    if (!m || !(m[1] === base || m[1].startsWith(`${base}.`))) continue;
    // 64-bit entries only: on x86-64 a bare "(libc6)" entry is a 32-bit library.
    if (/x86-64|AArch64|64bit/.test(m[2])) hits.push(m[3]);
  }
  return hits.sort((a, b) => newestFirst(base)(a.replace(/^.*\//, ''), b.replace(/^.*\//, '')));
}

/** Every path to try for one library, in order, each with where it came from. */
export function candidatesFor(lib: CudaLibSpec, env: SearchEnv, dirs = searchDirs(env)): Candidate[] {
  const out: Candidate[] = [];
  const add = (path: string, source: string) => {
    if (!out.some((c) => c.path === path)) out.push({ path, source });
  };
  const inDir = (d: SearchDir) => {
    const files = (env.listDir(d.dir) ?? []).filter(
      (f) => f === lib.base || (/^\.\d+(\.\d+)*$/.test(f.slice(lib.base.length)) && f.startsWith(lib.base)),
    );
    for (const f of files.sort(newestFirst(lib.base))) add(`${d.dir}/${f}`, d.source);
  };
  // The loader cache ranks after explicit folders but before the guesses (/usr/local/cuda*, Python).
  const explicit = dirs.filter((d) => d.source === 'CLUSTERSIM_CUDA_LIBS' || d.source === 'LD_LIBRARY_PATH');
  for (const d of explicit) inDir(d);
  for (const p of fromLoaderCache(env.ldconfigOutput, lib.base)) add(p, 'loader cache (ldconfig -p)');
  for (const d of dirs.filter((x) => !explicit.includes(x))) inDir(d);
  for (const s of lib.sonames) add(s, "dlopen's own search");
  return out;
}

/** One library's outcome as the addon reports it. */
export interface LibOutcome {
  name: string;
  required: boolean;
  path?: string;
  error?: string;
  tried: { path: string; error: string }[];
}

/** What calibrate can do instead of the CUDA backend. */
export const CPU_BACKEND_HINT = 'or run with --backend cpu';

/**
 * The message for a failed load: which libraries are missing, every path tried with dlopen's reason, which
 * folders were searched, and what to do.
 */
export function explainLoadFailure(
  outcomes: readonly LibOutcome[],
  dirs: readonly SearchDir[],
  otherwise = CPU_BACKEND_HINT,
): string {
  const missing = outcomes.filter((o) => !o.path && o.required);
  const noDriver = outcomes.some((o) => o.name === 'cuda' && !o.path);
  const lines = [
    ...(noDriver
      ? [
          'no NVIDIA driver here: libcuda.so.1, which comes with the driver, could not be loaded, ' +
            'so there is no GPU to measure.',
        ]
      : []),
    `the CUDA backend cannot start: ${missing.map((o) => o.name).join(', ')} could not be loaded.`,
  ];
  for (const o of missing) {
    const spec = CUDA_LIBS.find((l) => l.name === o.name);
    lines.push(`  lib${o.name} (${spec?.purpose ?? o.name}): tried ${o.tried.length} path(s)`);
    // dlerror() often starts with the path itself; say it once.
    for (const t of o.tried.slice(0, 8))
      lines.push(`    ${t.path}: ${t.error.startsWith(`${t.path}: `) ? t.error.slice(t.path.length + 2) : t.error}`);
    if (o.tried.length > 8) lines.push(`    … and ${o.tried.length - 8} more`);
  }
  lines.push(
    dirs.length > 0
      ? `  folders searched: ${dirs.map((d) => `${d.dir} (${d.source})`).join(', ')}`
      : '  folders searched: none found (LD_LIBRARY_PATH is empty, no /usr/local/cuda*, no site-packages/nvidia)',
  );
  const hints = [...new Set(missing.map((o) => CUDA_LIBS.find((l) => l.name === o.name)?.installHint).filter(Boolean))];
  lines.push(
    noDriver
      ? `  what to do: run on a machine with an NVIDIA GPU and its driver (nvidia-smi lists the GPU); ${otherwise}.`
      : `  what to do: ${hints.join('; ')}; or add the folder holding the library to LD_LIBRARY_PATH ` +
          `(or CLUSTERSIM_CUDA_LIBS); ${otherwise}.`,
  );
  return lines.join('\n');
}

/** Optional libraries that are missing, one line each (warnings, not errors). */
export function optionalMissing(outcomes: readonly LibOutcome[]): string[] {
  return outcomes
    .filter((o) => !o.path && !o.required)
    .map((o) => {
      const spec = CUDA_LIBS.find((l) => l.name === o.name);
      return `lib${o.name} not found (${spec?.purpose ?? ''}; ${spec?.installHint ?? ''})`;
    });
}
