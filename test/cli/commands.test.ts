import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { VERSION } from '../../src/version.js';
import { buildTopology } from '../../src/sim/network/topology.js';
import { collectiveSweep } from '../../src/sim/collectives/sweep.js';
import { presetCluster } from '../helpers/clusters.js';

describe('clustersim simulate', () => {
  it('prints a summary with step time, throughput, MFU, memory verdict and the time breakdown', async () => {
    const { code, out } = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml');
    expect(code).toBe(0);
    for (const s of [
      'step time',
      'samples/s',
      'tokens/s',
      'TFLOP/s',
      'MFU',
      'memory per GPU',
      'fits',
      'compute',
      'exposed communication',
      'idle',
    ])
      expect(out).toContain(s);
  });

  it('prints one JSON object with the documented fields, consistent with each other', async () => {
    const { code, out } = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--json');
    expect(code).toBe(0);
    const r = JSON.parse(out);
    for (const k of [
      'stepTimeS',
      'samplesPerS',
      'tokensPerS',
      'tflopsPerGpu',
      'hardwareTflopsPerGpu',
      'mfu',
      'gpus',
      'seed',
      'version',
    ])
      expect(r).toHaveProperty(k);
    for (const k of ['peakBytesPerGpu', 'capacityBytes', 'fits', 'breakdown']) expect(r.memory).toHaveProperty(k);
    for (const k of ['computeS', 'exposedCommS', 'idleS']) expect(r.breakdown).toHaveProperty(k);
    expect(r.version).toBe(VERSION);
    expect(r.gpus).toBe(16);
    expect(r.samplesPerS).toBeCloseTo(256 / r.stepTimeS, 6);
    expect(r.tokensPerS).toBeCloseTo((256 * 512) / r.stepTimeS, 3);
    // MFU = model TFLOP/s per GPU over the bf16 dense peak of an A100 (312).
    expect(r.mfu).toBeCloseTo(r.tflopsPerGpu / 312, 9);
    expect(r.memory.capacityBytes).toBe(80 * 2 ** 30);
  });

  it('gives byte-identical JSON for the same scenario and seed', async () => {
    const a = await cli('simulate', 'scenarios/llama2-7b-ddp-16node.yaml', '--json');
    const b = await cli('simulate', 'scenarios/llama2-7b-ddp-16node.yaml', '--json');
    expect(a.out).toBe(b.out);
    expect(JSON.parse(a.out).seed).toBe(1);
  });

  it('applies --set overrides', async () => {
    const base = JSON.parse((await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--json')).out);
    const more = JSON.parse(
      (
        await cli(
          'simulate',
          'scenarios/bert-large-ddp-2node.yaml',
          '--json',
          '--set',
          'parallel.ddp.bucketMB=5',
          '--set',
          'seed=7',
        )
      ).out,
    );
    expect(more.seed).toBe(7);
    expect(more.buckets.count).toBeGreaterThan(base.buckets.count);
  });

  it('reports a setup that does not fit as OOM with the shortfall, exit code 0', async () => {
    const { code, out } = await cli(
      'simulate',
      'scenarios/llama2-7b-ddp-16node.yaml',
      '--set',
      'cluster.preset=dgx-a100-80gb',
      '--json',
    );
    expect(code).toBe(0);
    const r = JSON.parse(out);
    expect(r.memory.fits).toBe(false);
    expect(r.memory.shortfallBytes).toBeCloseTo(r.memory.peakBytesPerGpu - r.memory.capacityBytes, 0);
  });

  it('names the bottleneck and simulates what to try, in the summary and in --json', async () => {
    const text = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml');
    expect(text.out).toContain('bottleneck: compute');
    // Each alternative's --set list is on the line under its row.
    expect(text.out).toMatch(
      /vocabulary padded to 30528 \(aligned LM-head GEMMs\)\s+[\d.]+ ms\s+-\d+\.\d%.*\n {6}--set model\.vocab=30528\n/,
    );
    const j = JSON.parse(
      (await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--json', '--alternatives', '1')).out,
    );
    expect(j.alternatives).toHaveLength(1);
    expect(j.alternatives[0]).toMatchObject({
      label: 'vocabulary padded to 30528 (aligned LM-head GEMMs)',
      sets: ['model.vocab=30528'],
      fits: true,
    });
    expect(j.alternatives[0].stepTimeS).toBeLessThan(j.stepTimeS);
    expect(
      JSON.parse((await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--json', '--alternatives', '0')).out)
        .alternatives,
    ).toEqual([]);
  });

  it('gives a bubble-bound step its share of the step, and no gradient buckets without data parallelism', async () => {
    // Llama-2-13B over pp 8 on one node (dp 1) with 16 micro-batches of 1: the bubble is about (8 − 1)/(16 + 8 − 1).
    const sets = [
      '--set',
      'parallel.tp=1',
      '--set',
      'parallel.sequenceParallel=false',
      '--set',
      'parallel.pp=8',
      '--set',
      'parallel.schedule=1f1b',
      '--set',
      'training.microBatch=1',
      '--set',
      'training.globalBatch=16',
      '--alternatives',
      '0',
    ];
    const text = await cli('simulate', 'scenarios/llama2-13b-tp8-nvswitch.yaml', ...sets);
    const j = JSON.parse((await cli('simulate', 'scenarios/llama2-13b-tp8-nvswitch.yaml', ...sets, '--json')).out);
    expect(j.bottleneck.bound).toBe('pipeline bubble');
    // Compute is 66% of the step: it is what bounds it, and the bubble is named as the
    // largest loss (issue 26, item 14).
    expect(j.bottleneck.computeShare).toBeGreaterThan(0.5);
    // The line is wrapped to the summary's width: read it as one.
    expect(text.out.replace(/\n {14}/g, ' ')).toContain(
      `bottleneck: compute (${(100 * j.bottleneck.computeShare).toFixed(1)}% of the step); ` +
        `the largest loss is pipeline bubble — ${(100 * j.bottleneck.share).toFixed(1)}% of the step: ` +
        `stages wait for each other while the pipeline fills and drains`,
    );
    expect(j.bottleneck.share).toBeCloseTo(j.breakdown.bubbleS / j.stepTimeS, 9);
    expect(text.out).toContain('16 micro-batch(es) per step\n');
    expect(text.out).not.toContain('gradient buckets');
  });

  it(
    'notes an MFU above what published runs report (above 65%), ' + 'and says how to model eager kernels when fused',
    async () => {
      const fused = JSON.parse(
        (await cli('simulate', 'scenarios/llama2-7b-zero3-nvlink.yaml', '--json', '--alternatives', '0')).out,
      );
      expect(fused.mfu).toBeGreaterThan(0.65);
      expect(fused.notes).toContain(
        `MFU ${(100 * fused.mfu).toFixed(1)}% is above what published training runs report (Megatron-LM up to 52% ` +
          `on A100, SC21 Table 1; PyTorch FSDP up to 46% on H100, llm-foundry's benchmarks): read it as a bound; ` +
          `the default fused element-wise kernels are a best case, --set training.kernels=eager models eager PyTorch`,
      );
      const bert = JSON.parse(
        (await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--json', '--alternatives', '0')).out,
      );
      expect(bert.mfu).toBeLessThan(0.65);
      expect(bert.notes.some((n: string) => n.startsWith('MFU'))).toBe(false);
    },
  );

  it("says a pipeline's bucket count is over all its stages, and how many each GPU holds", async () => {
    const j = JSON.parse(
      (await cli('simulate', 'scenarios/gpt3-175b-1024xa100.yaml', '--json', '--alternatives', '0')).out,
    );
    const text = (await cli('simulate', 'scenarios/gpt3-175b-1024xa100.yaml', '--alternatives', '0')).out;
    expect(j.parallel.pp).toBe(8);
    expect(text).toContain(
      `; ${j.buckets.count} gradient buckets over the 8 pipeline ` +
        `stages (about ${Math.round(j.buckets.count / 8)} on each GPU), `,
    );
  }, 120_000);
});

describe('clustersim collective', () => {
  it('prints an nccl-tests style table with doubling sizes from --min-bytes to --max-bytes', async () => {
    const { code, out } = await cli(
      'collective',
      '--cluster',
      'dgx-a100-80gb',
      '--nodes',
      '1',
      '--op',
      'all_reduce',
      '--min-bytes',
      '8',
      '--max-bytes',
      '8GiB',
    );
    expect(code).toBe(0);
    expect(out).toMatch(/size\s+count\s+type\s+redop\s+time\s+algbw\s+busbw/);
    const rows = out.split('\n').filter((l) => /^\s+\d/.test(l));
    expect(rows.length).toBe(31); // 8 B … 8 GiB: 2^3 … 2^33
    expect(rows[0].trim().split(/\s+/)[0]).toBe('8');
    expect(rows[30].trim().split(/\s+/)[0]).toBe(String(8 * 2 ** 30));
  });

  it("says how many of the cluster's nodes a smaller group spans (it fills nodes in order)", async () => {
    const part = await cli(
      'collective',
      '--cluster',
      'dgx-a100-80gb',
      '--nodes',
      '2',
      '--gpus',
      '8',
      '--max-bytes',
      '1MiB',
    );
    expect(part.out.split('\n')[0]).toBe(
      '# clustersim collective: all_reduce over 8 GPUs, ' +
        '1 of 2× dgx-a100-80gb, 200 Gb/s infiniband (predicted, aggregated flows)',
    );
    const whole = await cli('collective', '--cluster', 'dgx-a100-80gb', '--nodes', '2', '--max-bytes', '1MiB');
    expect(whole.out.split('\n')[0]).toContain('all_reduce over 16 GPUs, 2× dgx-a100-80gb,');
    // A send_recv over two nodes crosses them, where two GPUs of another collective share the first node: it says so.
    const across = await cli(
      'collective',
      '--cluster',
      'dgx-a100-80gb',
      '--nodes',
      '2',
      '--gpus',
      '2',
      '--op',
      'send_recv',
      '--max-bytes',
      '1MiB',
    );
    expect(across.out.split('\n')[0]).toContain(
      'send_recv over 2 GPUs (GPU 0 of node 0 to GPU 0 of node 1), 2× dgx-a100-80gb,',
    );
  });

  it(
    'counts elements as nccl-tests does: ' +
      "each rank's share for all_gather and reduce_scatter, the whole buffer otherwise",
    async () => {
      const count = async (op: string, ...more: string[]) => {
        const r = await cli(
          'collective',
          '--cluster',
          'dgx-a100-80gb',
          '--op',
          op,
          '--min-bytes',
          '1MiB',
          '--max-bytes',
          '1MiB',
          ...more,
        );
        return r.out
          .split('\n')
          .filter((l) => /^\s+\d/.test(l))[0]
          .trim()
          .split(/\s+/);
      };
      // 1 MiB of floats is 262,144 elements; over 8 GPUs each rank holds 32,768 (nccl-tests' paramcount).
      expect((await count('all_gather'))[1]).toBe('32768');
      expect((await count('reduce_scatter'))[1]).toBe('32768');
      expect((await count('all_reduce'))[1]).toBe('262144');
      const p2p = await count('send_recv', '--gpus', '2');
      expect(p2p[1]).toBe('262144');
      expect(p2p[p2p.length - 1]).toMatch(/^p2p\//);
      // alltoall_perf counts the floats each peer gets: 262,144 / 8.
      const a2a = await count('all_to_all');
      expect(a2a[1]).toBe('32768');
      expect(a2a[a2a.length - 1]).toBe('p2p/Simple');
    },
  );

  it("warns when a size exceeds one GPU's memory, and only then", async () => {
    const big = await cli('collective', '--cluster', 'dgx-a100-80gb', '--min-bytes', '64GiB', '--max-bytes', '256GiB');
    expect(big.code).toBe(0);
    expect(big.err).toBe(
      'clustersim: warning: 2 of the sizes (from 128 GiB) exceed the 80.0 GiB of one a100-sxm4-80gb: ' +
        'no GPU could hold the buffer, so those rows are arithmetic only\n',
    );
    expect(
      (await cli('collective', '--cluster', 'dgx-a100-80gb', '--min-bytes', '64GiB', '--max-bytes', '64GiB')).err,
    ).toBe('');
  });

  it('prints JSON rows { bytes, timeUs, algbwGBps, busbwGBps, algorithm } with --json', async () => {
    const { out } = await cli(
      'collective',
      '--cluster',
      'dgx-h100',
      '--nodes',
      '2',
      '--min-bytes',
      '1MiB',
      '--max-bytes',
      '4MiB',
      '--json',
    );
    const rows = JSON.parse(out);
    expect(rows.map((r: { bytes: number }) => r.bytes)).toEqual([2 ** 20, 2 ** 21, 2 ** 22]);
    for (const r of rows) {
      expect(r.algbwGBps).toBeCloseTo(r.bytes / (r.timeUs * 1e3), 9);
      expect(r.busbwGBps).toBeCloseTo((r.algbwGBps * 2 * 15) / 16, 9);
      expect(typeof r.algorithm).toBe('string');
    }
  });
});

describe('arguments the CLI cannot use', () => {
  it(
    'refuses a stray argument, and a run without a command, ' + 'with exit code 2; help asked for is a success',
    async () => {
      const two = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', 'other.yaml');
      expect([two.code, two.out]).toEqual([2, '']);
      expect(two.err).toContain("too many arguments for 'simulate'. Expected 1 argument but got 2");
      expect((await cli('presets', 'extra')).code).toBe(2);
      const none = await cli();
      expect(none.code).toBe(2);
      expect(none.err).toContain('Usage: clustersim');
      expect((await cli('--help')).code).toBe(0);
      expect((await cli('help', 'simulate')).code).toBe(0);
    },
  );
});

describe('clustersim collective: choices it cannot honour are refused, not replaced (exit 2)', () => {
  it.each([
    [['--gpus', '1'], '--gpus: a collective needs at least 2 GPUs (a single GPU moves nothing); give --gpus 2 or more'],
    [
      ['--op', 'all_gather', '--algorithm', 'tree'],
      '--algorithm tree: forces the algorithm of all_reduce only; ' +
        '--op all_gather runs as NCCL picks it (leave --algorithm out)',
    ],
    [
      ['--algorithm', 'hierarchical', '--protocol', 'LL'],
      '--protocol LL: the hierarchical algorithm runs the Simple protocol only; use --protocol Simple or auto',
    ],
    [
      ['--nodes', '100000', '--max-bytes', '8'],
      '--nodes: 100,000 × 8 = 800,000 GPUs is more than the 262,144 the ' +
        'simulator takes (time grows with the cluster); use at most 32,768 nodes',
    ],
  ])('collective %j', async (args, message) => {
    const r = await cli('collective', '--cluster', 'dgx-a100-80gb', ...args);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain(`clustersim: ${message}`);
  });
});

describe('clustersim collective --nics-per-node', () => {
  it(
    "overrides the node preset's NICs: " + '2 HGX A100 nodes with 4 × HDR reach the published 86–91 GB/s (within 10%)',
    async () => {
      const { code, out } = await cli(
        'collective',
        '--cluster',
        'dgx-a100-80gb',
        '--nodes',
        '2',
        '--nics-per-node',
        '4',
        '--min-bytes',
        '4GiB',
        '--max-bytes',
        '4GiB',
        '--json',
      );
      expect(code).toBe(0);
      const [row] = JSON.parse(out);
      expect(row.busbwGBps).toBeGreaterThan(86 * 0.9);
      expect(row.busbwGBps).toBeLessThan(91 * 1.1);
      const bad = await cli('collective', '--cluster', 'dgx-a100-80gb', '--nics-per-node', '0');
      expect(bad.code).toBe(2);
      expect(bad.err).toMatch(/--nics-per-node: expected a whole number ≥ 1, got '0'/);
    },
  );
});

describe('clustersim collective --compare', () => {
  const table = 'test/validation/vtrain-a100-allreduce/AR_GPU8_1M_1024M_LUT.csv';

  it('predicts at the measured sizes and reports each error and the median and worst', async () => {
    const { code, out } = await cli(
      'collective',
      '--cluster',
      'dgx-a100-80gb',
      '--gpus',
      '8',
      '--compare',
      table,
      '--json',
    );
    expect(code).toBe(0);
    const { rows, summary } = JSON.parse(out);
    const lines = readFileSync(table, 'utf8')
      .replace(/^\uFEFF/, '')
      .trim()
      .split(/\r?\n/)
      .slice(1);
    expect(rows).toHaveLength(lines.length);
    rows.forEach((r: { bytes: number; measuredUs: number; timeUs: number; errorPct: number }, i: number) => {
      const [bytes, , , timeNs] = lines[i].split(',').map(Number);
      expect(r.bytes).toBe(bytes);
      expect(r.measuredUs).toBeCloseTo(timeNs / 1e3, 9);
      expect(r.errorPct).toBeCloseTo((100 * (r.timeUs - r.measuredUs)) / r.measuredUs, 9);
    });
    // The predictions are the model's own (not taken from the file): the same as a plain sweep at those sizes.
    const plain = collectiveSweep(
      buildTopology(presetCluster('dgx-a100-80gb', 1)),
      'all_reduce',
      [...Array(8).keys()],
      rows.map((r: { bytes: number }) => r.bytes),
      { mode: 'aggregated', allReduceAlgorithm: 'auto', protocol: 'auto' },
    );
    rows.forEach((r: { timeUs: number }, i: number) => expect(r.timeUs).toBeCloseTo(plain[i].timeUs, 6));
    const abs = rows.map((r: { errorPct: number }) => Math.abs(r.errorPct)).sort((a: number, b: number) => a - b);
    expect(summary.worstAbsErrorPct).toBe(abs[abs.length - 1]);
    expect(summary.medianAbsErrorPct).toBeCloseTo((abs[abs.length / 2 - 1] + abs[abs.length / 2]) / 2, 9);
  });

  it('prints the comparison as a table, and says which file it cannot use', async () => {
    const { code, out } = await cli('collective', '--cluster', 'dgx-a100-80gb', '--gpus', '8', '--compare', table);
    expect(code).toBe(0);
    expect(out).toMatch(/measured \(us\)\s+predicted \(us\)\s+error %/);
    expect(out).toMatch(/# median \|error\| [\d.]+%, worst [\d.]+% at \d+ B/);
    const missing = await cli('collective', '--cluster', 'dgx-a100-80gb', '--compare', 'nope.txt');
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/--compare: cannot read 'nope.txt': no such file/);
  });
});

describe('clustersim presets', () => {
  it('lists the required GPU, node, network and model presets', async () => {
    const { code, out } = await cli('presets', '--json');
    expect(code).toBe(0);
    const c = JSON.parse(out);
    const names = (xs: { name: string }[]) => xs.map((x) => x.name);
    expect(names(c.gpus)).toEqual(
      expect.arrayContaining([
        'v100-sxm2-32gb',
        'a100-sxm4-40gb',
        'a100-sxm4-80gb',
        'h100-sxm5-80gb',
        'h200-sxm-141gb',
      ]),
    );
    expect(names(c.nodes)).toEqual(
      expect.arrayContaining(['dgx-1-v100', 'dgx-a100-80gb', 'dgx-h100', 'hgx-h200', 'pcie-8gpu']),
    );
    expect(names(c.networks)).toEqual(expect.arrayContaining(['ib-hdr', 'ib-ndr', 'roce-25', 'roce-100', 'roce-400']));
    expect(names(c.models)).toEqual(
      expect.arrayContaining([
        'gpt3-175b',
        'llama2-7b',
        'llama2-13b',
        'llama2-70b',
        'llama3-8b',
        'llama3-70b',
        'llama3-405b',
        'bert-large',
        'mlp-small',
      ]),
    );
    // The host side that optimizer offload uses: a DGX A100 640GB has 2 TB; CPU-Adam at 409.6 GB/s × 0.75 / 28 B.
    const dgx = c.nodes.find((n: { name: string }) => n.name === 'dgx-a100-80gb');
    expect(dgx.hostMemoryGiB).toBe(2048);
    expect(dgx.hostAdamParamsPerS).toBeCloseTo((409.6e9 * 0.75) / 28, -3);
    expect(c.nodes.find((n: { name: string }) => n.name === 'pcie-8gpu').hostMemoryGiB).toBeNull();
  });

  it(
    'says the NVLink column is per direction: ' + "the A100 datasheet's 600 GB/s is both directions, 300 each way",
    async () => {
      // NVIDIA A100 datasheet: "NVLink: 600 GB/s" (12 links × 25 GB/s per direction × 2); the table shows 300.
      const { out } = await cli('presets');
      const header = out.split('\n').find((l) => l.startsWith('name') && l.includes('HBM GB/s'))!;
      expect(header).toContain('NVLink or xGMI GB/s each way');
      expect(out.split('\n').find((l) => l.startsWith('a100-sxm4-80gb '))).toMatch(/\b300\b/);
      expect(out).toMatch(/NVLink or xGMI GB\/s each way \(busbw\)/);
    },
  );

  it('keeps the version in step with package.json', () => {
    expect(JSON.parse(readFileSync('package.json', 'utf8')).version).toBe(VERSION);
  });
});
