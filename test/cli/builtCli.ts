import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

// Worker threads load compiled JavaScript, so threaded paths are tested through the built CLI (dist/, as users
// run it); under vitest the modules are TypeScript and run in one thread.

const WORKER = 'dist/threads/taskPool.js';
/** Held by the test file that rebuilds, so that files run side by side do not rebuild dist/ at the same time. */
const LOCK = 'dist.build-lock';
const LOCK_WAIT_MS = 280_000;

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(p) : statSync(p).mtimeMs);
  }
  return newest;
}

const stale = () => !existsSync(WORKER) || statSync(WORKER).mtimeMs < newestMtimeMs('src');

/** Builds dist/ (what `npm run build` runs) when a source is newer than the compiled pool; one file at a time. */
export async function buildIfStale(): Promise<void> {
  if (!stale()) return;
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      // Another file is building: wait for it, then look again.
      if (Date.now() > until)
        throw new Error(`${LOCK} held for over ${LOCK_WAIT_MS / 1000} s: remove it if no test is building`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      if (!existsSync(LOCK) && !stale()) return;
    }
  }
  try {
    if (!stale()) return;
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'pipe' });
  } catch (err) {
    // Type errors elsewhere in a tree under edit still emit JavaScript; only a missing build is fatal.
    if (!existsSync(WORKER)) throw err;
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
