import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LLAMA_16 = join(ROOT, 'scenarios/llama2-7b-ddp-16node.yaml');

/** A stack frame as Node prints it: no bad-input message may contain one. */
import { cli, expectBadInput, STACK_FRAME } from '../helpers/badInput.js';
import { BUILT_BIN, buildCli, builtModule } from './builtCli.js';

/** Problem lines under the `file: N problems:` header. */
function problemLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('  '));
}

let dir: string;
let n = 0;

/** Writes a scenario file under the temporary folder and returns its path. */
function file(text: string, name = `scenario-${++n}.yaml`): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** A valid scenario (BERT-Large DDP on 2 DGX A100 nodes) with some lines changed. */
function scenario(
  overrides: { cluster?: string; model?: string; training?: string; parallel?: string; extra?: string } = {},
): string {
  return file(
    [
      'name: bad-input-test',
      overrides.cluster ?? 'cluster: { preset: dgx-a100-80gb, nodes: 2 }',
      overrides.model ?? 'model: { preset: bert-large }',
      overrides.training ?? 'training: { globalBatch: 256, microBatch: 8 }',
      overrides.parallel ?? 'parallel: { ddp: { bucketMB: 25 } }',
      overrides.extra ?? '',
    ].join('\n'),
  );
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'clustersim-bad-input-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('bad input: unknown presets', () => {
  it.each([
    ['cluster.preset', 'dgx-z', 'node', ['dgx-a100-80gb', 'hgx-h200']],
    ['cluster.network', 'myrinet-2000', 'network', ['ib-hdr', 'roce-100']],
    ['cluster.gpu', 'h900', 'gpu', ['a100-sxm4-80gb', 'h100-sxm5-80gb']],
    ['model.preset', 'llama9', 'model', ['llama2-7b', 'bert-large']],
    ['cluster.node.preset', 'dgx-2', 'node', ['dgx-h100']],
    ['cluster.network.preset', 'ib-fast', 'network', ['ib-ndr']],
    ['cluster.gpu.preset', 'b200', 'gpu', ['h200-sxm-141gb']],
  ])('reports an unknown %s (%s) with the path and the allowed names', async (path, name, kind, someAllowed) => {
    const r = await cli('simulate', scenario(), '--set', `${path}=${name}`);
    expectBadInput(r, `${path}: unknown ${kind} preset '${name}'; expected one of: `, ...someAllowed);
    expect(problemLines(r.stderr)).toHaveLength(1);
  });

  it('reports every unknown preset of a scenario at once, one line each', async () => {
    const r = await cli(
      'simulate',
      scenario(),
      '--set',
      'cluster.preset=dgx-z',
      '--set',
      'cluster.network=myrinet-2000',
      '--set',
      'model.preset=llama9',
    );
    expectBadInput(
      r,
      '3 problems',
      "cluster.preset: unknown node preset 'dgx-z'",
      "cluster.network: unknown network preset 'myrinet-2000'",
      "model.preset: unknown model preset 'llama9'",
    );
    expect(problemLines(r.stderr)).toHaveLength(3);
  });

  it(
    'says which --set gave a value that is refused, ' + 'in simulate and in memory, and blames the file for its own',
    async () => {
      const r = await cli('simulate', scenario(), '--set', 'training.globalBatch=100');
      expectBadInput(r, 'training.globalBatch: 100 is not divisible by', '[from --set training.globalBatch=100]');
      const m = await cli('memory', scenario(), '--set', 'parallel.tp=3');
      expectBadInput(m, 'parallel.tp: 3 does not divide heads', '[from --set parallel.tp=3]');
      // Field names with characters special to regular expressions are reported like any unknown field.
      expectBadInput(
        await cli('simulate', scenario(), '--set', 'training.x[=1'),
        'training.x[: unknown field',
        '[from --set training.x[=1]',
      );
      expectBadInput(await cli('simulate', scenario(), '--set', 'training.foo(=1'), 'training.foo(: unknown field');
      const own = await cli(
        'simulate',
        scenario({ training: 'training: { globalBatch: 100, microBatch: 8 }' }),
        '--set',
        'seed=2',
      );
      expectBadInput(own, 'training.globalBatch: 100 is not divisible by');
      expect(own.stderr).not.toContain('--set');
    },
  );

  it(
    'reports a layersPerStage that does not add up like every other problem: ' + 'under the file name, with its --set',
    async () => {
      const path = scenario();
      const r = await cli('simulate', path, '--set', 'parallel.layersPerStage=[1]');
      expect(r.stderr).toBe(
        `clustersim: ${path}: 1 problem:\n` +
          `  parallel.layersPerStage: adds up to 1, ` +
          `but the model has 24 layers [from --set parallel.layersPerStage=[1]]`,
      );
      expectBadInput(r);
      const stages = await cli('simulate', path, '--set', 'parallel.layersPerStage=[12, 12]');
      expectBadInput(
        stages,
        `${path}: 1 problem:`,
        'parallel.layersPerStage: needs one count per pipeline stage (1), ' +
          'got 2 [from --set parallel.layersPerStage=[12, 12]]',
      );
    },
  );

  it('names the option, not the scenario field, for an unknown preset given to collective', async () => {
    expectBadInput(
      await cli('collective', '--cluster', 'dgx-zz'),
      "--cluster: unknown node preset 'dgx-zz'; expected one of: ",
      'dgx-a100-80gb',
    );
    expectBadInput(
      await cli('collective', '--cluster', 'dgx-a100-80gb', '--network', 'myrinet-2000'),
      "--network: unknown network preset 'myrinet-2000'; expected one of: ",
      'ib-hdr',
    );
  });
});

describe('bad input: missing fields', () => {
  it('reports a missing training.globalBatch and what it must be', async () => {
    const r = await cli('simulate', scenario({ training: 'training: { microBatch: 8 }' }));
    expectBadInput(r, 'training.globalBatch: is required; expected a whole number > 0');
  });

  it('reports a missing cluster section and the fields it takes', async () => {
    const r = await cli('simulate', scenario({ cluster: '' }));
    expectBadInput(r, 'cluster: is required; expected a mapping with fields preset, nodes, gpu, node, network');
  });

  it('reports a cluster without a node preset and lists the presets', async () => {
    const r = await cli('simulate', scenario({ cluster: 'cluster: { nodes: 2 }' }));
    expectBadInput(r, 'cluster.preset: is required', 'dgx-a100-80gb', 'hgx-h200');
  });

  it('lists every field an inline model without preset or hfConfig lacks', async () => {
    const r = await cli('simulate', scenario({ model: 'model: { arch: gpt, hidden: 1024 }' }));
    expectBadInput(
      r,
      'model.layers: is required when the model has no preset or hfConfig; expected a whole number > 0',
      'model.seqLen: is required',
      'model.vocab: is required',
      'model.heads: is required',
    );
    expect(r.stderr).not.toContain('model.hidden');
    expect(problemLines(r.stderr)).toHaveLength(4);
  });
});

describe('bad input: wrong types', () => {
  it('reports text where a number is expected, with the value found', async () => {
    const r = await cli('simulate', scenario({ training: 'training: { globalBatch: 256, microBatch: "eight" }' }));
    expectBadInput(r, "training.microBatch: expected a whole number > 0, got 'eight' (text)");
    expect(problemLines(r.stderr)).toHaveLength(1);
  });

  it('hints to drop the quotes when a number was written as text', async () => {
    const r = await cli('simulate', scenario(), '--set', 'training.globalBatch="256"');
    expectBadInput(
      r,
      "training.globalBatch: expected a whole number > 0, got '256' (text; write numbers without quotes)",
    );
  });

  it('reports a fraction where a whole number is expected', async () => {
    expectBadInput(
      await cli('simulate', scenario(), '--set', 'cluster.nodes=1.5'),
      'cluster.nodes: expected a whole number > 0, got 1.5',
    );
  });

  it('lists the choices of an enumerated field', async () => {
    const r = await cli('simulate', scenario(), '--set', 'training.precision=fp4');
    expectBadInput(r, "training.precision: expected one of 'bf16', 'fp16', 'fp32', 'tf32', 'fp8', got 'fp4'");
  });

  it('reports a section that is not a mapping', async () => {
    const r = await cli('simulate', scenario({ training: 'training: 5' }));
    expectBadInput(r, 'training: expected a mapping with fields globalBatch, microBatch', 'got 5');
  });

  it('shows how to write a preset named where its mapping belongs', async () => {
    const r = await cli('simulate', scenario({ cluster: 'cluster: dgx-h100' }));
    expectBadInput(
      r,
      'cluster: expected a mapping with fields preset, nodes, gpu, node, network, ' +
        "got 'dgx-h100' (text); to name a preset write cluster: { preset: dgx-h100 }",
    );
  });

  it('reports a preset-or-fields field given neither', async () => {
    const r = await cli('simulate', scenario(), '--set', 'cluster.gpu=5');
    expectBadInput(
      r,
      'cluster.gpu: expected a GPU preset name or a mapping with fields preset, name',
      'memoryGiB',
      'got 5',
    );
  });

  it('reports each of several problems in one file on its own line', async () => {
    const r = await cli(
      'simulate',
      scenario({
        training: 'training: { globalBatch: 256, microBatch: "eight", precision: fp4 }',
        extra: 'comm: { mode: fast }\nseed: -1',
      }),
    );
    expectBadInput(
      r,
      '4 problems',
      'seed: expected a whole number ≥ 0, got -1',
      'training.microBatch:',
      'training.precision:',
      "comm.mode: expected one of 'aggregated', 'step', got 'fast'",
    );
    expect(problemLines(r.stderr)).toHaveLength(4);
  });
});

describe('bad input: sizes that must be positive', () => {
  it.each([
    ['training.globalBatch', '0', 'a whole number > 0'],
    ['cluster.nodes', '-1', 'a whole number > 0'],
    ['parallel.ddp.bucketMB', '0', 'a number > 0'],
    ['parallel.ddp.firstBucketMB', '-5', 'a number > 0'],
    ['training.microBatch', '0', 'a whole number > 0'],
    // Hardware numbers have a plausible range (issue 26, item 3), which the message gives.
    ['cluster.gpu.memoryGiB', '0', 'a number ≥ 0.1 and ≤ 100000'],
    ['cluster.node.nicsPerNode', '0', 'a whole number > 0 and ≤ 1024'],
    ['cluster.network.linkEfficiency', '1.5', 'a number > 0 and ≤ 1'],
  ])('rejects %s: %s and says it must be %s', async (path, value, allowed) => {
    const r = await cli('simulate', scenario(), '--set', `${path}=${value}`);
    expectBadInput(r, `${path}: expected ${allowed}, got ${value}`);
    expect(problemLines(r.stderr)).toHaveLength(1);
  });

  it.each([
    [
      'cluster.node.hostMemoryGiB',
      '-5',
      '≥ 0.1 and ≤ 10000000',
      'host (CPU) memory of the node, GiB: where optimizer offload keeps its state',
    ],
    [
      'cluster.node.hostAdamParamsPerS',
      '0',
      '≥ 1000 and ≤ 1000000000000000',
      "the whole node's CPU-Adam rate for optimizer offload, parameters per second, shared by its GPUs' processes",
    ],
  ])(
    'rejects %s: %s and says it must be in range (%s) as well as what the field means',
    async (path, value, range, meaning) => {
      const r = await cli('simulate', scenario(), '--set', `${path}=${value}`);
      expectBadInput(r, `${path}: expected a number ${range} (${meaning}), got ${value}`);
      expect(problemLines(r.stderr)).toHaveLength(1);
    },
  );

  it('rejects an infinite bucket size', async () => {
    expectBadInput(
      await cli('simulate', scenario(), '--set', 'parallel.ddp.bucketMB=.inf'),
      'parallel.ddp.bucketMB: expected a number > 0, got Infinity',
    );
  });
});

describe('bad input: batch arithmetic', () => {
  it(
    'reports a global batch not divisible by microBatch × dp, ' + 'with the divisor and the nearest valid batches',
    async () => {
      const r = await cli('simulate', scenario({ training: 'training: { globalBatch: 200, microBatch: 8 }' }));
      expectBadInput(
        r,
        'training.globalBatch: 200 is not divisible by microBatch × dp = 8 × 16 = 128; ' +
          'use a multiple of 128 (e.g. 128 or 256)',
      );
    },
  );

  it('reports a dp that does not use every GPU', async () => {
    const r = await cli('simulate', scenario({ parallel: 'parallel: { dp: 8 }' }));
    expectBadInput(
      r,
      "parallel.dp: tp × pp × dp = 1 × 1 × 8 = 8 does not match the cluster's 16 GPUs (2 nodes × 8)",
      'set dp to 16 or leave it out',
    );
  });

  it('says a split larger than the cluster exceeds it, and counts one node as one node', async () => {
    const one = 'cluster: { preset: dgx-a100-80gb, nodes: 1 }';
    const tp = await cli('simulate', scenario({ cluster: one }), '--set', 'parallel.tp=16');
    expectBadInput(
      tp,
      "parallel: tp × pp = 16 × 1 = 16 exceeds the cluster's 8 GPUs (1 node × 8) [from --set parallel.tp=16]",
    );
    const dp = await cli('simulate', scenario({ cluster: one, parallel: 'parallel: { dp: 16 }' }));
    expectBadInput(
      dp,
      "parallel.dp: tp × pp × dp = 1 × 1 × 16 = 16 exceeds the cluster's 8 GPUs (1 node × 8); " +
        'set dp to 8 or leave it out',
    );
    const odd = await cli(
      'simulate',
      scenario({ cluster: 'cluster: { preset: dgx-a100-80gb, nodes: 3 }' }),
      '--set',
      'parallel.tp=16',
    );
    expectBadInput(odd, "parallel: tp × pp = 16 × 1 does not divide the cluster's 24 GPUs (3 nodes × 8)");
  });

  it('reports heads that do not divide the hidden size', async () => {
    const r = await cli('simulate', scenario({ model: 'model: { preset: bert-large, heads: 5 }' }));
    expectBadInput(r, 'model.heads: 5 does not divide hidden (1024)');
  });
});

describe('bad input: the file itself', () => {
  it('reports a file that does not exist, with the path looked at', async () => {
    const missing = join(dir, 'no-such-scenario.yaml');
    expectBadInput(await cli('simulate', missing), `cannot read scenario file '${missing}': no such file`);
  });

  it('reports a folder given as the scenario', async () => {
    expectBadInput(await cli('simulate', dir), `cannot read scenario file '${dir}': it is a folder`);
  });

  it(
    'gives the line of the field at fault, ' + 'or of the section that holds it, and none for a value --set gave',
    async () => {
      const head = [
        'name: lines',
        'cluster: { preset: dgx-a100-80gb, nodes: 1 }',
        'model: { preset: llama2-7b }',
        'training:',
        '  globalBatch: 8',
        'parallel:',
        '  pp: 1',
      ];
      expectBadInput(
        await cli('simulate', file([...head, '  schedul: 1f1b'].join('\n'))),
        /parallel\.schedul: unknown field .*\[line 8\]$/m,
      );
      const tp3 = file([...head, '  tp: 3'].join('\n'));
      const r = await cli('simulate', tp3);
      expectBadInput(r);
      const tp = problemLines(r.stderr).filter((l) => l.startsWith('  parallel.tp'));
      expect(tp.length).toBeGreaterThan(0);
      for (const l of tp) expect(l).toMatch(/^ {2}parallel\.tp: .*\[line 8\]$/);
      const viaSet = await cli('simulate', tp3, '--set', 'parallel.tp=5');
      expectBadInput(viaSet);
      for (const l of problemLines(viaSet.stderr).filter((x) => x.startsWith('  parallel.tp')))
        expect(l).toMatch(/^ {2}parallel\.tp: .*\[from --set parallel\.tp=5\]$/);
      // A field the file leaves out: the line of the section that should hold it (training:, line 4).
      const noBatch = await cli(
        'simulate',
        file(
          [
            'name: lines',
            'cluster: { preset: dgx-a100-80gb, nodes: 1 }',
            'model: { preset: llama2-7b }',
            'training:',
            '  microBatch: 1',
          ].join('\n'),
        ),
      );
      expectBadInput(noBatch, /^ {2}training\.globalBatch: .*\[line 4\]$/m);
    },
  );

  it('reports malformed YAML with its line and column, once', async () => {
    const r = await cli('simulate', file('cluster: { preset: dgx-a100-80gb\nmodel: [\n'));
    expectBadInput(r, /is not valid YAML\/JSON at line \d+, column \d+: \S/);
    expect(r.stderr.match(/at line/g)).toHaveLength(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('reports malformed JSON', async () => {
    expectBadInput(
      await cli('simulate', file('{"cluster": {"preset": "dgx-a100-80gb",}, ', 'bad.json')),
      /bad\.json' is not valid YAML\/JSON at line 1/,
    );
  });

  it('reports a typo in a top-level field once, suggesting the field it meant', async () => {
    const r = await cli(
      'simulate',
      file('cluster: { preset: dgx-a100-80gb }\nmodel: { preset: bert-large }\ntrainin: { globalBatch: 8 }\n'),
    );
    expectBadInput(
      r,
      "trainin: unknown field (did you mean 'training'? it is required and missing); " +
        'allowed at the top level: name, description, seed, cluster, model, training, parallel, comm',
    );
    expect(problemLines(r.stderr)).toHaveLength(1);
  });

  it('reports an unknown nested field and the fields allowed there', async () => {
    const r = await cli('simulate', scenario({ parallel: 'parallel: { ddp: { bucketMb: 5 } }' }));
    expectBadInput(
      r,
      "parallel.ddp.bucketMb: unknown field (did you mean 'bucketMB'?); " +
        'allowed in parallel.ddp: bucketMB, firstBucketMB, overlap',
    );
  });

  it('reports an unknown field with no close match, listing what is allowed', async () => {
    const r = await cli('simulate', scenario({ cluster: 'cluster: { preset: dgx-a100-80gb, nodes: 2, racks: 4 }' }));
    expectBadInput(r, 'cluster.racks: unknown field; allowed in cluster: preset, nodes, gpu, node, network');
  });

  it('reports a scenario that is a list', async () => {
    expectBadInput(
      await cli('simulate', file('- cluster: dgx-a100-80gb\n- model: bert-large\n')),
      'must hold a mapping of fields (cluster, model, training',
      'but it holds a list',
    );
  });

  it.each([
    ['empty', ''],
    ['only a comment', '# nothing here\n'],
  ])('reports a scenario that is %s', async (_what, text) => {
    expectBadInput(
      await cli('simulate', file(text)),
      'must hold a mapping of fields (cluster, model, training, ' +
        'and optionally name, description, seed, parallel, comm, noise, simulation)',
      'but it is empty',
    );
  });

  it('reports a scenario that is a single value', async () => {
    expectBadInput(await cli('simulate', file('hello\n')), 'but it holds the string "hello"');
  });

  it('reports a missing hfConfig file under model.hfConfig, saying where relative paths start', async () => {
    const r = await cli('simulate', scenario({ model: 'model: { hfConfig: models/none.json }' }));
    expectBadInput(
      r,
      `model.hfConfig: cannot read Hugging Face config '${join(dir, 'models/none.json')}': no such file`,
      `looked up from the scenario file's folder, ${dir}`,
    );
  });

  it('reports an hfConfig that lacks a field under model.hfConfig', async () => {
    writeFileSync(join(dir, 'partial.config.json'), JSON.stringify({ model_type: 'llama', hidden_size: 4096 }));
    const r = await cli('simulate', scenario({ model: 'model: { hfConfig: partial.config.json }' }));
    expectBadInput(r, "model.hfConfig: 'partial.config.json': missing field 'num_hidden_layers'");
  });
});

describe('bad input: --set', () => {
  it.each([['nodes'], ['=3'], ['training..globalBatch=3']])(
    "rejects --set '%s' and shows the expected form",
    async (arg) => {
      expectBadInput(
        await cli('simulate', scenario(), '--set', arg),
        `--set '${arg}': expected path=value`,
        'parallel.ddp.bucketMB=5',
      );
    },
  );

  it('rejects a --set value that is not valid YAML', async () => {
    expectBadInput(
      await cli('simulate', scenario(), '--set', 'model.mlpSizes=[1, 2'),
      "--set 'model.mlpSizes=[1, 2': the value '[1, 2' is not valid YAML",
    );
  });

  it('rejects a --set path that goes inside a plain value', async () => {
    expectBadInput(
      await cli('simulate', scenario(), '--set', 'training.globalBatch.x=3'),
      "--set 'training.globalBatch.x=3': 'training.globalBatch' is 256, not a mapping, so it has no field 'x'",
    );
  });

  it('reports a --set of an unknown field like one written in the file', async () => {
    expectBadInput(
      await cli('simulate', scenario(), '--set', 'training.globalbatch=3'),
      "training.globalbatch: unknown field (did you mean 'globalBatch'?)",
    );
  });
});

describe('bad usage: commander', () => {
  it('rejects an unknown command with exit code 2', async () => {
    expectBadInput(await cli('simulat', scenario()), "unknown command 'simulat'");
  });

  it('rejects an unknown option with exit code 2', async () => {
    expectBadInput(await cli('simulate', scenario(), '--frobnicate'), "unknown option '--frobnicate'");
  });

  it('rejects a missing argument and a missing required option with exit code 2', async () => {
    expectBadInput(await cli('simulate'), "missing required argument 'scenario'");
    expectBadInput(await cli('check-profile'), "required option '--profile <profile.json>' not specified");
    expectBadInput(
      await cli('collective'),
      'name the cluster: --cluster <node preset> (see `clustersim presets`) or --scenario <file>',
    );
  });

  it("rejects a value outside an option's choices and lists them", async () => {
    expectBadInput(
      await cli('collective', '--cluster', 'dgx-a100-80gb', '--op', 'bcast'),
      "argument 'bcast' is invalid. Allowed choices are all_reduce, all_gather",
    );
  });
});

describe('an infeasible but valid setup is a result', () => {
  it('reports Llama-2-7B DDP on 80 GB A100s as OOM with the shortfall, exit code 0', async () => {
    const r = await cli('simulate', LLAMA_16, '--set', 'cluster.preset=dgx-a100-80gb');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/memory per GPU\s+[\d.]+ GiB of 80\.0 GiB: OOM, short by [\d.]+ GiB/);
  });

  it('gives the shortfall in the JSON result too', async () => {
    const r = await cli('simulate', LLAMA_16, '--set', 'cluster.preset=dgx-a100-80gb', '--json');
    expect(r.code, r.stderr).toBe(0);
    const memory = JSON.parse(r.stdout).memory;
    expect(memory.fits).toBe(false);
    expect(memory.shortfallBytes).toBeGreaterThan(0);
    expect(memory.peakBytesPerGpu - memory.capacityBytes).toBeCloseTo(memory.shortfallBytes, -3);
  });
});

describe('the real process', () => {
  beforeAll(buildCli, 300_000);

  it('exits with code 2 and prints no stack trace for a bad scenario and for an unknown option', () => {
    mkdirSync(join(dir, 'proc'), { recursive: true });
    const bad = join(dir, 'proc', 'bad.yaml');
    writeFileSync(
      bad,
      'cluster: { preset: dgx-a100-80gb }\n' +
        'model: { preset: bert-large }\n' +
        'training: { globalBatch: 8, microBatch: eight }\n',
    );
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [BUILT_BIN, ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 30_000,
      });

    const scenarioRun = run('simulate', bad);
    expect(scenarioRun.status, scenarioRun.stderr).toBe(2);
    expect(scenarioRun.stderr).toContain('training.microBatch');
    expect(scenarioRun.stderr).not.toContain(STACK_FRAME);
    expect(scenarioRun.stdout).toBe('');

    const usageRun = run('simulate', bad, '--no-such-option');
    expect(usageRun.status, usageRun.stderr).toBe(2);
    // commander's own errors carry the tool's name, as every other error does.
    expect(usageRun.stderr).toContain("clustersim: error: unknown option '--no-such-option'");
    expect(usageRun.stderr).not.toContain(STACK_FRAME);
  });

  it('runs as `node dist/cli/main.js` too, as bin/clustersim.js does (a review found it silent, exit 0)', () => {
    const help = spawnSync(process.execPath, [builtModule('cli/main.js'), '--help'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: clustersim');
    const bad = spawnSync(process.execPath, [builtModule('cli/main.js'), 'simulat'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("clustersim: error: unknown command 'simulat'");
  });
});
