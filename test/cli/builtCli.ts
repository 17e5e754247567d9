import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

// Worker threads load compiled JavaScript, so threaded paths are tested through the built CLI (dist/, as users
// run it); under vitest the modules are TypeScript and run in one thread.

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Builds dist/ (what `npm run build` runs) when a source is newer than the compiled worker. */
export function buildIfStale(): void {
  const worker = 'dist/threads/taskPool.js';
  if (existsSync(worker) && statSync(worker).mtimeMs >= newestMtimeMs('src')) return;
  try {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'pipe' });
  } catch (err) {
    // Type errors elsewhere in a tree under edit still emit JavaScript; only a missing build is fatal.
    if (!existsSync(worker)) throw err;
  }
}

