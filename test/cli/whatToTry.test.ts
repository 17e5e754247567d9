import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { scenarioFromFile } from '../../src/cli/scenarioInput.js';
import { simulateStep } from '../../src/sim/simulateStep.js';
import { formatAdvice } from '../../src/cli/adviceOutput.js';

/** The alternatives `simulate --json` lists, and whether the current setup fits and what bounds it. */
async function advice(
  ...sets: string[]
): Promise<{ fits: boolean; bound: string; alternatives: { label: string; fits?: boolean }[] }> {
  const r = await cli(
    'simulate',
    'scenarios/llama2-13b-tp8-nvswitch.yaml',
    '--json',
    '--jobs',
    '1',
    ...sets.flatMap((s) => ['--set', s]),
  );
  expect(r.code, r.err).toBe(0);
  const j = JSON.parse(r.out);
  return { fits: j.memory.fits, bound: j.bottleneck.bound, alternatives: j.alternatives };
}

describe('what to try', () => {
  it('lists only changes that fit when the current setup fits', async () => {
    // Llama-2-70B with tp 16 over two nodes fits; taking tensor parallelism away would need hundreds of GiB per GPU.
    const a = await advice(
      'model.preset=llama2-70b',
      'cluster.nodes=2',
      'parallel.tp=16',
      'parallel.zero=1',
      'training.microBatch=1',
    );
    expect(a.fits).toBe(true);
    expect(a.alternatives.length).toBeGreaterThan(0);
    expect(a.alternatives.every((x) => x.fits === true)).toBe(true);
  });

  it(
    'does not offer a bigger micro-batch when the pipeline ' + 'bubble bounds the step (fewer micro-batches widen it)',
    async () => {
      const a = await advice(
        'model.preset=gpt3-13b',
        'parallel.tp=2',
        'parallel.pp=4',
        'parallel.sequenceParallel=false',
        'training.globalBatch=2',
        'training.microBatch=1',
      );
      expect(a.bound).toBe('pipeline bubble');
      expect(a.alternatives.map((x) => x.label)).not.toContain('micro-batch 2');
    },
  );
});

describe('what to try, when nothing helps', () => {
  const s = scenarioFromFile('scenarios/bert-large-ddp-2node.yaml');
  const r = simulateStep(s).result;
  const alt = (factor: number, fits: boolean) => ({
    label: 'x',
    sets: ['parallel.zero=1'],
    stepTimeS: r.stepTimeS * factor,
    peakBytesPerGpu: 1,
    fits,
  });

  it('says so, and points to plan, when none of the simulated changes is faster and fits', () => {
    expect(formatAdvice(r, [alt(1.2, true), alt(0.8, false)])).toContain(
      'none of the 2 is faster and fits: clustersim plan searches every split',
    );
  });

  it('says nothing of the kind when one is faster and fits', () => {
    expect(formatAdvice(r, [alt(1.2, true), alt(0.8, true)])).not.toContain('none of the');
  });
});
