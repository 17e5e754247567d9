import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { errorBandFor, residualPct } from '../../src/accuracy/errorBand.js';
import { storedResiduals } from '../../src/accuracy/residualStore.js';
import { bandCellOf, bandCsvCells } from '../../src/accuracy/bandText.js';

describe('the error band on a prediction', () => {
  it('simulate --json carries the band of the comparable validated rows, and the step times it spans', async () => {
    const { code, out } = await cli(
      'simulate',
      'scenarios/llama2-13b-tp8-nvswitch.yaml',
      '--alternatives',
      '0',
      '--json',
    );
    expect(code).toBe(0);
    const r = JSON.parse(out);
    // One node of A100 with TP 8 and no framework host model: too few validated rows of exactly that kind
    // (Korthikanti's 22B), so the band drops the host model and takes the vTrain single-node rows of that style too.
    expect(r.errorBand.matched).toEqual(['gpu', 'style', 'scale']);
    const rows = storedResiduals().filter(
      (x) => x.kind.gpu === 'ampere' && x.kind.style === 'tensor' && x.kind.scale === 'one-node',
    );
    expect(rows.filter((x) => x.kind.host === 'kernels-only').length).toBeLessThan(5);
    expect(r.errorBand.rows).toBe(rows.length);
    const sorted = rows.map(residualPct).sort((a, b) => a - b);
    expect(r.errorBand.lowPct).toBeGreaterThanOrEqual(sorted[0]);
    expect(r.errorBand.highPct).toBeLessThanOrEqual(sorted.at(-1)!);
    expect(r.errorBand.stepTimeLowS).toBeCloseTo(r.stepTimeS * (1 + r.errorBand.lowPct / 100), 12);
    expect(r.errorBand.stepTimeHighS).toBeCloseTo(r.stepTimeS * (1 + r.errorBand.highPct / 100), 12);
  });

  it('simulate prints the range next to the step time and what it rests on', async () => {
    const { code, out } = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--alternatives', '0');
    expect(code).toBe(0);
    expect(out).toMatch(/step time\s+\d+\.\d+ ms, likely \d+\.\d+ ms to \d+\.\d+ ms/);
    expect(out).toMatch(
      /error band\s+validated runs like this one measured \d+% (more|less) to \d+% (more|less) than predicted/,
    );
    expect(out).toMatch(/\d+ rows: Ampere \(A100\)/);
  });

  it('says when rows of other GPUs stand in for a GPU with too few validated', async () => {
    const args = [
      'simulate',
      'scenarios/bert-large-ddp-2node.yaml',
      '--alternatives',
      '0',
      '--set',
      'cluster.gpu=v100-sxm2-32gb',
      '--set',
      'training.precision=fp16',
    ];
    const json = JSON.parse((await cli(...args, '--json')).out);
    expect(json.errorBand.matched).toEqual(['style']);
    expect((await cli(...args)).out.replace(/\s+/g, ' ')).toContain(
      'data-parallel on other GPUs (too few validated on Volta)',
    );
  });

  it('says so when no validated run is comparable', () => {
    expect(errorBandFor({ gpu: 'volta', style: 'data', scale: 'one-node', host: 'kernels-only' }, [])).toBeUndefined();
    expect(bandCellOf({ rows: 0, note: 'none' })).toBe('none');
    expect(bandCsvCells({ rows: 0, note: 'none' })).toEqual([undefined, undefined, 0]);
    expect(bandCsvCells(undefined)).toEqual([undefined, undefined, undefined]);
  });

  it('memory says its verdict has no measured band yet, in text and in --json', async () => {
    const text = await cli('memory', 'scenarios/llama2-70b-zero2-8xa100.yaml');
    expect(text.code).toBe(0);
    expect(text.out).toContain('Error band: no validated measurement of peak memory is bundled yet');
    const json = await cli('memory', 'scenarios/llama2-70b-zero2-8xa100.yaml', '--json');
    expect(JSON.parse(json.out).errorBand).toEqual({
      rows: 0,
      note: expect.stringContaining('checked against closed forms'),
    });
  });
});
