import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BackendUnavailableError, openBackend, openCpuBackend, openCudaBackend, parseCudaDescription } from '../../src/calibrate/backends.js';
import { CUDA_LIBS, candidatesFor, explainLoadFailure, fromLoaderCache, optionalMissing, searchDirs, type LibOutcome, type SearchEnv } from '../../src/calibrate/cudaLibs.js';
import { addonPath, explainAddonFailure, loadAddon, NativeUnavailableError, type NativeAddon } from '../../src/calibrate/native.js';

/** A fake file system: folder → entries. */
function env(dirs: Record<string, string[]>, over: Partial<SearchEnv> = {}): SearchEnv {
  return { extraDirs: [], ldLibraryPath: '', ldconfigOutput: '', cudaHomes: [], sitePackages: [], listDir: (d) => dirs[d], ...over };
}

const cudart = CUDA_LIBS.find((l) => l.name === 'cudart')!;
const cublas = CUDA_LIBS.find((l) => l.name === 'cublas')!;

const LDCONFIG = [
  '123 libs found in cache `/etc/ld.so.cache\'',
  '\tlibcudart.so.12 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudart.so.12',
  '\tlibcudart.so.11.0 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudart.so.11.0',
  '\tlibcudart.so.12 (libc6) => /usr/lib/i386-linux-gnu/libcudart.so.12',
  '\tlibcublasLt.so.12 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcublasLt.so.12',
].join('\n');

describe('CUDA library search', () => {
  it('searches LD_LIBRARY_PATH, then the loader cache, /usr/local/cuda*, Python site-packages, then the soname', () => {
    const e = env(
      {
        '/opt/libs': ['libcudart.so.12', 'libfoo.so'],
        '/usr/local/cuda-12.4/lib64': ['libcudart.so.12.4.127', 'libcudart.so.12', 'libcudart.so', 'libcublas.so.12'],
        '/py/site/nvidia': ['cuda_runtime', 'cublas'],
        '/py/site/nvidia/cuda_runtime/lib': ['libcudart.so.12'],
        '/py/site/nvidia/cublas/lib': ['libcublas.so.12', 'libcublasLt.so.12'],
      },
      { ldLibraryPath: '/opt/libs:', ldconfigOutput: LDCONFIG, cudaHomes: ['/usr/local/cuda-12.4'], sitePackages: ['/py/site'] },
    );
    expect(searchDirs(e).map((d) => d.source)).toEqual(['LD_LIBRARY_PATH', '/usr/local/cuda-12.4', 'python site-packages', 'python site-packages']);
    const c = candidatesFor(cudart, e).map((x) => x.path);
    expect(c).toEqual([
      '/opt/libs/libcudart.so.12',
      '/usr/lib/x86_64-linux-gnu/libcudart.so.12',
      '/usr/lib/x86_64-linux-gnu/libcudart.so.11.0',
      '/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127',
      '/usr/local/cuda-12.4/lib64/libcudart.so.12',
      '/usr/local/cuda-12.4/lib64/libcudart.so',
      '/py/site/nvidia/cuda_runtime/lib/libcudart.so.12',
      'libcudart.so.13',
      'libcudart.so.12',
      'libcudart.so.11.0',
      'libcudart.so',
    ]);
    // libcublas.so.12 must not match libcublasLt.so.12, and the other way round.
    expect(candidatesFor(cublas, e).map((x) => x.path)).toContain('/py/site/nvidia/cublas/lib/libcublas.so.12');
    expect(candidatesFor(cublas, e).map((x) => x.path)).not.toContain('/py/site/nvidia/cublas/lib/libcublasLt.so.12');
  });

  it('puts CLUSTERSIM_CUDA_LIBS first and ignores 32-bit loader-cache entries', () => {
    const e = env({ '/mine': ['libcudart.so.12'] }, { extraDirs: ['/mine'], ldLibraryPath: '/mine', ldconfigOutput: LDCONFIG });
    expect(candidatesFor(cudart, e)[0]).toEqual({ path: '/mine/libcudart.so.12', source: 'CLUSTERSIM_CUDA_LIBS' });
    expect(fromLoaderCache(LDCONFIG, 'libcudart.so')).not.toContain('/usr/lib/i386-linux-gnu/libcudart.so.12');
  });

  it('still offers the bare sonames when nothing is installed', () => {
    expect(candidatesFor(cudart, env({})).map((c) => c.source)).toEqual(Array(4).fill("dlopen's own search"));
  });
});

describe('loader failure messages', () => {
  const outcomes: LibOutcome[] = [
    { name: 'cudart', required: true, error: 'not found or not loadable', tried: [{ path: '/usr/local/cuda/lib64/libcudart.so.12', error: 'cannot open shared object file: No such file or directory' }, { path: 'libcudart.so.12', error: 'libcudart.so.12: cannot open shared object file' }] },
    { name: 'cublasLt', required: true, path: '/x/libcublasLt.so.12', tried: [] },
    { name: 'cublas', required: true, error: 'not found or not loadable', tried: [{ path: '/x/libcublas.so.12', error: 'loaded, but it lacks cublasGemmEx (too old a version?)' }] },
    { name: 'nccl', required: false, error: 'not found or not loadable', tried: [] },
  ];

  it('names each missing library, every path tried with the reason, the folders searched and what to do', () => {
    const msg = explainLoadFailure(outcomes, [{ dir: '/usr/local/cuda/lib64', source: '/usr/local/cuda' }]);
    expect(msg).toMatch(/cudart, cublas could not be loaded/);
    expect(msg).toContain('/usr/local/cuda/lib64/libcudart.so.12: cannot open shared object file');
    expect(msg).toContain('lacks cublasGemmEx');
    expect(msg).toContain('folders searched: /usr/local/cuda/lib64 (/usr/local/cuda)');
    expect(msg).toContain('pip install nvidia-cuda-runtime-cu12');
    expect(msg).toContain('LD_LIBRARY_PATH');
    expect(msg).toContain('--backend cpu');
    expect(msg).not.toContain('cublasLt (');
    expect(explainLoadFailure(outcomes, [])).toContain('no /usr/local/cuda*');
  });

  it('leads with the missing driver when libcuda is not there either, and says what the command can do instead', () => {
    const noDriver: LibOutcome[] = [...outcomes, { name: 'cuda', required: false, error: 'not found or not loadable', tried: [] }];
    const msg = explainLoadFailure(noDriver, [], 'or validate it on the GPU machine');
    expect(msg.split('\n')[0]).toMatch(/^no NVIDIA driver here: libcuda\.so\.1, .*could not be loaded, so there is no GPU to measure\.$/);
    expect(msg).toMatch(/what to do: run on a machine with an NVIDIA GPU and its driver .*; or validate it on the GPU machine\.$/);
    expect(msg).not.toContain('pip install');
    expect(explainLoadFailure(outcomes, [])).not.toContain('no NVIDIA driver');
  });

  it('lists missing optional libraries as warnings with what they are for', () => {
    expect(optionalMissing(outcomes)).toEqual([expect.stringMatching(/^libnccl not found \(NCCL: collectives.*nvidia-nccl-cu12/)]);
  });
});

/** An addon double whose CUDA side fails in a chosen way. */
function fakeAddon(over: Partial<NativeAddon>): NativeAddon {
  const none = () => {
    throw new Error('not used');
  };
  return { abiVersion: 1, cpuInfo: () => ({ model: 'cpu', logicalCores: 2, memoryBytes: 1, gemmIsa: 'generic', gemmTile: { m: 96, n: 128 } }), runCpu: none, cudaLoad: none, cudaDescribe: none, runCuda: none, ...over };
}

describe('opening the CPU backend', () => {
  it('refuses more GEMM threads than the machine has logical cores (the fit would take them as that many units)', () => {
    expect(() => openCpuBackend(fakeAddon({}), 64)).toThrow(BackendUnavailableError);
    expect(() => openCpuBackend(fakeAddon({}), 64)).toThrow('64 GEMM threads are more than the 2 logical cores here');
    expect(openCpuBackend(fakeAddon({}), 2).machine.computeThreads).toBe(2);
  });
});
