import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import type { SearchEnv } from './cudaLibs.js';

/**
 * Gathers the real `SearchEnv` of this machine: environment variables, the loader cache, CUDA installations
 * and Python's site-packages. Each probe is best effort: one that fails contributes nothing.
 */

function listDir(dir: string): string[] | undefined {
  try {
    return readdirSync(dir);
  } catch {
    return undefined;
  }
}

function run(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

/** /usr/local/cuda, then versioned installs newest first, after CUDA_HOME / CUDA_PATH. */
function cudaHomes(env: NodeJS.ProcessEnv): string[] {
  const homes = [env.CUDA_HOME, env.CUDA_PATH].filter((h): h is string => !!h);
  const local = (listDir('/usr/local') ?? []).filter((d) => /^cuda(-[\d.]+)?$/.test(d));
  local.sort((a, b) => (a === 'cuda' ? -1 : b === 'cuda' ? 1 : b.localeCompare(a, undefined, { numeric: true })));
  return [...new Set([...homes, ...local.map((d) => `/usr/local/${d}`)])];
}

/** Site-packages of python3 (asked directly), of an active venv or conda env, and the usual system folders. */
function sitePackages(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  const script = 'import site,sys\nprint("\\n".join(site.getsitepackages()+[site.getusersitepackages()]))';
  for (const py of ['python3', 'python']) {
    const text = run(py, ['-c', script]);
    if (text) {
      out.push(
        ...text
          .split('\n')
          .map((s) => s.trim())
          .filter(Boolean),
      );
      break;
    }
  }
  const roots = [env.VIRTUAL_ENV, env.CONDA_PREFIX, '/usr/local', '/usr', `${homedir()}/.local`].filter(
    (r): r is string => !!r,
  );
  for (const root of roots) {
    for (const lib of ['lib', 'lib64']) {
      for (const py of (listDir(`${root}/${lib}`) ?? []).filter((d) => /^python3(\.\d+)?$/.test(d))) {
        for (const kind of ['site-packages', 'dist-packages']) out.push(`${root}/${lib}/${py}/${kind}`);
      }
    }
  }
  return [...new Set(out)].filter((d) => listDir(d) !== undefined);
}

export function gatherSearchEnv(env: NodeJS.ProcessEnv = process.env): SearchEnv {
  const ldconfig = run('/sbin/ldconfig', ['-p']) || run('ldconfig', ['-p']);
  return {
    extraDirs: (env.CLUSTERSIM_CUDA_LIBS ?? '').split(':').filter(Boolean),
    ldLibraryPath: env.LD_LIBRARY_PATH ?? '',
    ldconfigOutput: ldconfig,
    cudaHomes: cudaHomes(env),
    sitePackages: sitePackages(env),
    listDir,
  };
}
