#!/usr/bin/env node
// Simulating tens of thousands of GPUs can need more than Node's default heap (about 4 GiB): when the
// limit is below three quarters of the machine's memory (capped at 32 GiB), run again with a larger one.
import { spawn } from 'node:child_process';
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';

const wantMiB = Math.min(32 * 1024, Math.floor((totalmem() * 0.75) / 2 ** 20));
const haveMiB = getHeapStatistics().heap_size_limit / 2 ** 20;
if (!process.env.CLUSTERSIM_NO_RESPAWN && haveMiB < wantMiB * 0.9) {
  const child = spawn(
    process.execPath,
    [`--max-old-space-size=${wantMiB}`, ...process.execArgv, ...process.argv.slice(1)],
    {
      stdio: 'inherit',
      env: { ...process.env, CLUSTERSIM_NO_RESPAWN: '1', CLUSTERSIM_WRAPPED: '1' },
    },
  );
  // This process only waits for the child, and passes on the signals that would stop it: the child handles them
  // (a calibration keeps what it measured). Ctrl-C reaches both processes of the group, so the child may get
  // SIGINT twice within a moment; it takes that as one Ctrl-C (CLUSTERSIM_WRAPPED, REPEATED_SIGINT_MS in
  // src/cli/calibrateCommand.ts).
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
} else {
  // Run by the wrapper: die with it, however it went (kill -9 included), rather than go on simulating as an orphan.
  // A simulation keeps the main thread busy for minutes, so a thread of its own watches for the wrapper's end (this
  // process then has another parent) and hangs up, as a closed terminal would; it keeps nothing alive.
  if (process.env.CLUSTERSIM_WRAPPED === '1') {
    const watch = `const { workerData } = require('node:worker_threads');
setInterval(() => { if (process.ppid !== workerData) process.kill(process.pid, 'SIGHUP'); }, 250);`;
    new Worker(watch, { eval: true, workerData: process.ppid }).unref();
  }
  import('../dist/cli/main.js')
    .then((m) => m.main(process.argv))
    .catch((err) => {
      process.stderr.write(`clustersim: ${err && err.message ? err.message : err}\n`);
      process.exitCode = 1;
    });
}
