import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  interface ProvidedContext {
    /** The temporary repository that test/cli/builtCli.ts compiles the CLI into. */
    builtRepo: string;
  }
}

/**
 * One fresh temporary directory a run, for the tests that need the compiled CLI: they build it there, never into the
 * checkout's dist/, which `npm run build` and whoever works in the checkout own. Only the tests that need it build,
 * so a run of other files pays nothing. The real path: `node dist/cli/main.js` compares its argv with import.meta.url.
 */
export default function setup(project: TestProject): () => void {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'clustersim-build-')));
  project.provide('builtRepo', root);
  // In watch mode a rerun builds the sources as they are then.
  project.onTestsRerun(() => {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root);
  });
  return () => rmSync(root, { recursive: true, force: true });
}
