import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inject } from 'vitest';

// Worker threads load compiled JavaScript, so threaded paths are tested through the built CLI; under vitest the
// modules are TypeScript and run in one thread. The build goes into the run's temporary repository
// (test/globalSetup.ts), not the checkout's dist/. Compiled modules find scenarios, data, the native addon and bin/
// relative to themselves (import.meta.url), so that repository links to the checkout's files beside its own dist/.

const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url));
const provided = inject('builtRepo');
if (!provided) throw new Error('no temporary repository to build in: run vitest with vitest.config.ts (globalSetup)');

/** The temporary repository: dist/ compiled from src/, bin/ copied, everything else linked to the checkout. */
export const BUILT_REPO: string = provided;
/** The built CLI, run as `node BUILT_BIN ...`. */
export const BUILT_BIN = join(BUILT_REPO, 'bin', 'clustersim.js');
/** The path of a compiled module, `file` relative to dist/ (`threads/taskPool.js`). */
export const builtModule = (file: string): string => join(BUILT_REPO, 'dist', file);
/** The same as a file URL, for `import`. */
export const builtModuleUrl = (file: string): string => pathToFileURL(builtModule(file)).href;

/** Written once the build is complete; held while one test file builds, so that files side by side build once. */
const DONE = join(BUILT_REPO, '.built');
const LOCK = join(BUILT_REPO, '.build-lock');
const LOCK_WAIT_MS = 280_000;
/** What a build that failed lacks: type errors alone still emit them. */
const OUTPUTS = ['cli/main.js', 'threads/taskPool.js'];
/**
 * Not linked: dist/ is built here; bin/ is copied, since Node runs a linked script from its real path and
 * bin/clustersim.js imports ../dist.
 */
const NOT_LINKED = new Set(['.git', 'bin', 'dist']);

function build(): void {
  const present = new Set(readdirSync(BUILT_REPO));
  for (const entry of readdirSync(CHECKOUT))
    if (!NOT_LINKED.has(entry) && !present.has(entry)) symlinkSync(join(CHECKOUT, entry), join(BUILT_REPO, entry));
  cpSync(join(CHECKOUT, 'bin'), join(BUILT_REPO, 'bin'), { recursive: true });
  const tsc = join(CHECKOUT, 'node_modules/typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(CHECKOUT, 'tsconfig.json'), '--outDir', join(BUILT_REPO, 'dist')], {
      stdio: 'pipe',
    });
  } catch (err) {
    // Type errors elsewhere in a tree under edit still emit JavaScript; only a missing output is fatal.
    const missing = OUTPUTS.filter((f) => !existsSync(builtModule(f)));
    if (missing.length > 0) {
      const out = (err as { stdout?: Buffer }).stdout?.toString() ?? '';
      throw new Error(`tsc emitted no ${missing.join(', ')} in ${BUILT_REPO}: ${out || String(err)}`);
    }
  }
  writeFileSync(DONE, '');
}

/** Compiles the CLI into the run's temporary repository unless a test file already has. */
export async function buildCli(): Promise<void> {
  const until = Date.now() + LOCK_WAIT_MS;
  while (!existsSync(DONE)) {
    try {
      mkdirSync(LOCK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // Another file is building: wait for it, then look again (it may have failed, and this file then tries).
      if (Date.now() > until) throw new Error(`${LOCK} held for over ${LOCK_WAIT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    try {
      if (!existsSync(DONE)) build();
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
}
