import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, builtModuleUrl } from '../cli/builtCli.js';
import { compiledWorker, runTasks } from '../../src/threads/taskPool.js';

// Under the test runner there is no compiled worker beside the sources: these are the one-thread paths (the threaded
// ones are tested through the built CLI, test/cli/simulateParallel.test.ts and scaleInterrupt.test.ts).
describe('the task pool in one thread', () => {
  it('finds no compiled worker beside TypeScript sources', () => {
    expect(compiledWorker(new URL('../../src/advise/alternativeWorker.js', import.meta.url))).toBeUndefined();
  });

  it('runs the tasks in the order given, each once, and reports them as they finish', async () => {
    const seen: number[] = [];
    const r = await runTasks({
      jobs: 4,
      worker: undefined,
      job: null,
      ids: [2, 0, 1],
      runHere: (id) => id * 10,
      onResult: (id) => seen.push(id),
    });
    expect(seen).toEqual([2, 0, 1]);
    expect(r.results).toEqual([0, 10, 20]);
    expect(r).toMatchObject({ workers: 0, interrupted: false });
  });

  it('starts no task once its signal has aborted, and keeps those done', async () => {
    const stop = new AbortController();
    const r = await runTasks({
      jobs: 1,
      worker: undefined,
      job: null,
      ids: [0, 1, 2],
      runHere: (id) => id,
      onResult: () => stop.abort(),
      signal: stop.signal,
    });
    expect(r.interrupted).toBe(true);
    expect(Object.keys(r.results)).toEqual(['0']);
    const before = new AbortController();
    before.abort();
    const none = await runTasks({
      jobs: 1,
      worker: undefined,
      job: null,
      ids: [0, 1],
      runHere: (id) => id,
      signal: before.signal,
    });
    expect(none).toMatchObject({ interrupted: true, results: [] });
  });
});

describe('the task pool and a real Ctrl-C', () => {
  beforeAll(buildCli, 300_000);

  it('starts no more task after a SIGINT that came during the first, which ran before the event loop turned', () => {
    // The first task runs straight from the script, as a command's first point does; the signal is only seen once the
    // loop has polled, which one setImmediate after that task did not wait for.
    const script = `
      import { runTasks } from ${JSON.stringify(builtModuleUrl('threads/taskPool.js'))};
      const stop = new AbortController();
      process.on('SIGINT', () => stop.abort());
      const runHere = (id) => {
        if (id === 0) {
          process.kill(process.pid, 'SIGINT');
          const t = Date.now();
          while (Date.now() - t < 100);
        }
        return id;
      };
      const r = await runTasks({ jobs: 1, worker: undefined, job: null, ids: [0, 1, 2], runHere, signal: stop.signal });
      console.log(JSON.stringify({ done: Object.keys(r.results), interrupted: r.interrupted }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ done: ['0'], interrupted: true });
  });
});
