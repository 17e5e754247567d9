import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BackendUnavailableError,
  openBackend,
  openCpuBackend,
  openCudaBackend,
  parseCudaDescription,
} from '../../src/calibrate/backends.js';
import {
  CUDA_LIBS,
  candidatesFor,
  explainLoadFailure,
  fromLoaderCache,
  optionalMissing,
  searchDirs,
  type LibOutcome,
  type SearchEnv,
} from '../../src/calibrate/cudaLibs.js';
import {
  addonPath,
  explainAddonFailure,
  loadAddon,
  NativeUnavailableError,
  type NativeAddon,
} from '../../src/calibrate/native.js';

/** A fake file system: folder → entries. */
function env(dirs: Record<string, string[]>, over: Partial<SearchEnv> = {}): SearchEnv {
  return {
    extraDirs: [],
    ldLibraryPath: '',
    ldconfigOutput: '',
    cudaHomes: [],
    sitePackages: [],
    listDir: (d) => dirs[d],
    ...over,
  };
}

const cudart = CUDA_LIBS.find((l) => l.name === 'cudart')!;
const cublas = CUDA_LIBS.find((l) => l.name === 'cublas')!;

const LDCONFIG = [
  "123 libs found in cache `/etc/ld.so.cache'",
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
      {
        ldLibraryPath: '/opt/libs:',
        ldconfigOutput: LDCONFIG,
        cudaHomes: ['/usr/local/cuda-12.4'],
        sitePackages: ['/py/site'],
      },
    );
    expect(searchDirs(e).map((d) => d.source)).toEqual([
      'LD_LIBRARY_PATH',
      '/usr/local/cuda-12.4',
      'python site-packages',
      'python site-packages',
    ]);
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
    const e = env(
      { '/mine': ['libcudart.so.12'] },
      { extraDirs: ['/mine'], ldLibraryPath: '/mine', ldconfigOutput: LDCONFIG },
    );
    expect(candidatesFor(cudart, e)[0]).toEqual({ path: '/mine/libcudart.so.12', source: 'CLUSTERSIM_CUDA_LIBS' });
    expect(fromLoaderCache(LDCONFIG, 'libcudart.so')).not.toContain('/usr/lib/i386-linux-gnu/libcudart.so.12');
  });

  it('still offers the bare sonames when nothing is installed', () => {
    expect(candidatesFor(cudart, env({})).map((c) => c.source)).toEqual(Array(4).fill("dlopen's own search"));
  });
});

describe('loader failure messages', () => {
  const outcomes: LibOutcome[] = [
    {
      name: 'cudart',
      required: true,
      error: 'not found or not loadable',
      tried: [
        {
          path: '/usr/local/cuda/lib64/libcudart.so.12',
          error: 'cannot open shared object file: No such file or directory',
        },
        { path: 'libcudart.so.12', error: 'libcudart.so.12: cannot open shared object file' },
      ],
    },
    { name: 'cublasLt', required: true, path: '/x/libcublasLt.so.12', tried: [] },
    {
      name: 'cublas',
      required: true,
      error: 'not found or not loadable',
      tried: [{ path: '/x/libcublas.so.12', error: 'loaded, but it lacks cublasGemmEx (too old a version?)' }],
    },
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
    const noDriver: LibOutcome[] = [
      ...outcomes,
      { name: 'cuda', required: false, error: 'not found or not loadable', tried: [] },
    ];
    const msg = explainLoadFailure(noDriver, [], 'or validate it on the GPU machine');
    expect(msg.split('\n')[0]).toMatch(
      /^no NVIDIA driver here: libcuda\.so\.1, .*could not be loaded, so there is no GPU to measure\.$/,
    );
    expect(msg).toMatch(
      /what to do: run on a machine with an NVIDIA GPU and its driver .*; or validate it on the GPU machine\.$/,
    );
    expect(msg).not.toContain('pip install');
    expect(explainLoadFailure(outcomes, [])).not.toContain('no NVIDIA driver');
  });

  it('lists missing optional libraries as warnings with what they are for', () => {
    expect(optionalMissing(outcomes)).toEqual([
      expect.stringMatching(/^libnccl not found \(NCCL: collectives.*nvidia-nccl-cu12/),
    ]);
  });
});

/** An addon double whose CUDA side fails in a chosen way. */
function fakeAddon(over: Partial<NativeAddon>): NativeAddon {
  const none = () => {
    throw new Error('not used');
  };
  return {
    abiVersion: 1,
    cpuInfo: () => ({ model: 'cpu', logicalCores: 2, memoryBytes: 1, gemmIsa: 'generic', gemmTile: { m: 96, n: 128 } }),
    runCpu: none,
    cpuCheck: none,
    cudaLoad: none,
    cudaDescribe: none,
    runCuda: none,
    ...over,
  };
}

describe('opening the CPU backend', () => {
  it(
    'refuses more GEMM threads than the machine has logical cores ' + '(the fit would take them as that many units)',
    () => {
      expect(() => openCpuBackend(fakeAddon({}), 64)).toThrow(BackendUnavailableError);
      expect(() => openCpuBackend(fakeAddon({}), 64)).toThrow('64 GEMM threads are more than the 2 logical cores here');
      expect(openCpuBackend(fakeAddon({}), 2).machine.computeThreads).toBe(2);
    },
  );
});

describe('opening the CUDA backend', () => {
  const noLibs = (reqs: { name: string; required: boolean }[]) =>
    reqs.map((r) => ({
      name: r.name,
      required: r.required,
      error: 'not found',
      tried: [{ path: `lib${r.name}.so`, error: 'cannot open shared object file' }],
    }));
  const allLibs = (reqs: { name: string; required: boolean }[]) =>
    reqs.map((r) => ({ name: r.name, required: r.required, path: `/lib/lib${r.name}.so`, tried: [] }));

  it('fails with the search explanation when the libraries are missing', () => {
    expect(() => openCudaBackend(fakeAddon({ cudaLoad: noLibs }), env({}))).toThrow(BackendUnavailableError);
    expect(() => openCudaBackend(fakeAddon({ cudaLoad: noLibs }), env({}))).toThrow(
      /cudart, cublasLt, cublas could not be loaded/,
    );
  });

  it('says the libraries loaded but no GPU is usable, and what to check', () => {
    const addon = fakeAddon({
      cudaLoad: allLibs,
      cudaDescribe: () => {
        throw new Error('cudaGetDeviceCount failed: no CUDA-capable device is detected (CUDA error 100)');
      },
    });
    expect(() => openCudaBackend(addon, env({}))).toThrow(
      new RegExp(
        /loaded \(libcudart from \/lib\/libcudart.so\), but no GPU is usable: /.source +
          /cudaGetDeviceCount failed: no CUDA-capable device.*nvidia-smi.*CUDA_VISIBLE_DEVICES/.source,
      ),
    );
  });

  it('describes the GPUs and libraries it found, and warns about missing NCCL', () => {
    const warnings: string[] = [];
    const addon = fakeAddon({
      cudaLoad: (reqs) =>
        allLibs(reqs).map((o) => (o.name === 'nccl' ? { ...o, path: undefined, error: 'not found' } : o)),
      cudaDescribe: () => ({
        deviceCount: '2',
        driverVersion: '12040',
        runtimeVersion: '12020',
        'device.0.name': 'NVIDIA H200',
        'device.0.memoryBytes': String(143771 * 2 ** 20),
        'device.0.smCount': '132',
        'device.0.computeCapability': '9.0',
        'device.1.name': 'NVIDIA H200',
      }),
    });
    const b = openCudaBackend(addon, env({}), (w) => warnings.push(w));
    expect(b.machine.cuda?.devices.map((d) => d.name)).toEqual(['NVIDIA H200', 'NVIDIA H200']);
    expect(b.machine.cuda?.libraries.cudart).toBe('/lib/libcudart.so');
    expect(b.machine.cuda?.driverVersion).toBe('12040');
    expect(b.maxRanks).toBe(1);
    expect(warnings.join('\n')).toMatch(/libnccl not found[\s\S]*collectives between GPUs are not measured/);
  });

  it('parses the description the addon returns', () => {
    const { devices, versions } = parseCudaDescription({
      deviceCount: '1',
      ncclVersion: '22105',
      'device.0.name': 'A100',
      'device.0.smCount': '108',
      'device.0.memoryBytes': '42949672960',
      'device.0.computeCapability': '8.0',
    });
    expect(devices).toEqual([
      { index: 0, name: 'A100', memoryBytes: 42949672960, smCount: 108, computeCapability: '8.0' },
    ]);
    expect(versions).toEqual({ ncclVersion: '22105' });
  });
});

describe('the native addon on this machine', () => {
  it('explains a missing or unloadable addon with how to build it', () => {
    expect(explainAddonFailure('/x/a.node', false)).toMatch(
      /not built: \/x\/a.node does not exist; build it with `npm run build:native`/,
    );
    expect(
      explainAddonFailure(
        '/x/a.node',
        true,
        new Error('The module was compiled against a different Node.js version using NODE_MODULE_VERSION 108'),
      ),
    ).toMatch(/another Node.js version/);
    expect(() => loadAddon('/nonexistent/clustersim_native.node')).toThrow(NativeUnavailableError);
    expect(addonPath({ CLUSTERSIM_NATIVE: '/tmp/x.node' })).toBe('/tmp/x.node');
    expect(addonPath({})).toMatch(/native\/build\/Release\/clustersim_native\.node$/);
  });

  it.skipIf(process.env.CLUSTERSIM_SKIP_NATIVE === '1')(
    'reports every real dlopen failure for paths that do not exist',
    () => {
      const outcomes = loadAddon().cudaLoad([
        { name: 'cudart', required: true, paths: ['/nonexistent/libcudart.so.12'] },
        { name: 'nccl', required: false, paths: [] },
      ]);
      expect(outcomes[0].path).toBeUndefined();
      expect(outcomes[0].tried[0].path).toBe('/nonexistent/libcudart.so.12');
      expect(outcomes[0].tried[0].error).toMatch(/No such file|cannot open/);
      expect(outcomes[1].error).toBe('no candidate path');
      expect(() => loadAddon().cudaDescribe()).toThrow(/could not be loaded: cudart/);
    },
  );

  // This development machine has a CUDA 13 runtime in /usr/local/cuda but no driver and no GPU: the real
  // symbols bind and the first call reports why nothing can run.
  const cudart = existsSync('/usr/local/cuda/lib64')
    ? readdirSync('/usr/local/cuda/lib64').find((f) => /^libcudart\.so\.\d+$/.test(f))
    : undefined;
  const hasGpu = existsSync('/dev/nvidia0') || process.env.CLUSTERSIM_TEST_HAS_GPU === '1';
  it.skipIf(process.env.CLUSTERSIM_SKIP_NATIVE === '1' || !cudart || hasGpu)(
    'binds a real libcudart and reports the CUDA error when no GPU can run',
    async () => {
      const addon = loadAddon();
      const [o] = addon.cudaLoad([
        { name: 'cudart', required: true, paths: [`/usr/local/cuda/lib64/${cudart}`] },
        { name: 'cublas', required: false, paths: [] },
      ]);
      expect(o.path).toBe(`/usr/local/cuda/lib64/${cudart}`);
      expect(() => addon.cudaDescribe()).toThrow(/cudaGetDeviceCount failed: .*\(CUDA error \d+\)/);
      await expect(
        addon.runCuda({ kind: 'gemm', dtype: 'bf16', m: 64, n: 64, k: 64, warmup: 0, repeats: 1, inner: 1 }),
      ).rejects.toThrow(/CUDA error/);
    },
  );

  it.skipIf(process.env.CLUSTERSIM_SKIP_NATIVE === '1' || process.env.CLUSTERSIM_TEST_HAS_GPU === '1')(
    'falls back from auto to the CPU backend, saying why, where there is no GPU',
    () => {
      const warnings: string[] = [];
      const b = openBackend('auto', { warn: (w) => warnings.push(w) });
      expect(b.kind).toBe('cpu');
      expect(warnings[0]).toMatch(
        /^using the CPU backend: (no NVIDIA driver here|the CUDA (backend cannot start|libraries loaded))/,
      );
      expect(() => openBackend('cuda')).toThrow(BackendUnavailableError);
    },
  );
});
