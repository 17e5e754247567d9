import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

/** GPT-OSS-120B on 8 nodes with its experts over 8 GPUs, saved where the CLI can read it. */
function gptOssScenario(): string {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-gptoss-'));
  const scenario = [
    'name: gpt-oss',
    'cluster: { preset: dgx-h100, nodes: 8 }',
    'model: { preset: gpt-oss-120b }',
    'training: { globalBatch: 256, microBatch: 1, seqLen: 4096 }',
    'parallel: { pp: 4, ep: 8, zero: 1, recompute: full }',
  ].join('\n');
  writeFileSync(join(dir, 's.yaml'), scenario);
  return join(dir, 's.yaml');
}

describe('what a model leaves out', () => {
  it('is named by memory, in its text and its JSON, for GPT-OSS (its attention sinks and banded layers)', async () => {
    const file = gptOssScenario();
    const text = await cli('memory', file);
    expect(text.code).toBe(0);
    expect(text.out.replace(/\s+/g, ' ')).toMatch(
      new RegExp(
        /Note: gpt-oss-120b: not modelled, so not in the step or memory: /.source +
          /the attention sinks, and the 128-token banded attention/.source,
      ),
    );
    const json = await cli('memory', file, '--json');
    expect(JSON.parse(json.out).notModelled).toHaveLength(1);
  });

  it('is not claimed for a model that leaves nothing out', async () => {
    const { out } = await cli('memory', 'scenarios/llama2-70b-zero2-8xa100.yaml', '--json');
    expect(JSON.parse(out).notModelled).toBeUndefined();
  });
});
