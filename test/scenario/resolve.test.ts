import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, base, problems, resolved } from './resolveFixtures.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { resolveClusterSection, resolveScenario, type Scenario } from '../../src/scenario/resolve.js';
import { gpuPreset, networkPreset, nodePreset } from '../../src/sim/hardware/presets.js';
import { modelPreset } from '../../src/sim/workload/modelPresets.js';
import { GiB } from '../../src/sim/engine/units.js';

const LLAMA_CONFIG = join(ROOT, 'scenarios/models/llama2-7b.config.json');

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'clustersim-resolve-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('defaults', () => {
  it('uses every GPU for data parallelism when dp is not given', () => {
    const s = resolved(base());
    expect(s.parallel.dp).toBe(16);
    expect(
      resolved({ ...base(), cluster: { preset: 'hgx-h200', nodes: 3 }, training: { globalBatch: 24 } }).parallel.dp,
    ).toBe(24);
  });

  it('warns that the GPU-level NVLink rate and PCIe generation time nothing, and names the node fields that do', () => {
    // A user copying the A100 datasheet's "NVLink 600 GB/s" into cluster.gpu saw no change and no word about it:
    // links are timed from cluster.node.nvlinkBandwidthGBps (NCCL's ~230 GB/s busbw on DGX A100, nccl-tests#149).
    const gpu = (fields: Record<string, unknown>) =>
      resolved({ ...base(), cluster: { preset: 'dgx-a100-80gb', nodes: 2, gpu: fields } });
    const nv = gpu({ nvlinkBandwidthGBps: 600 });
    expect(
      nv.warnings?.some(
        (w) =>
          w.startsWith('cluster.gpu.nvlinkBandwidthGBps: ignored') && w.includes('cluster.node.nvlinkBandwidthGBps'),
      ),
    ).toBe(true);
    expect(nv.cluster.node.nvlinkBandwidthGBps).toBe(230);
    expect(
      gpu({ pcieGen: 3 }).warnings?.some(
        (w) => w.startsWith('cluster.gpu.pcieGen: ignored') && w.includes('cluster.node.pcieBandwidthGBps'),
      ),
    ).toBe(true);
    expect(gpu({ memoryGiB: 40 }).warnings).toBeUndefined();
  });

  it(
    'warns that virtualStages is ignored by a pipeline schedule ' +
      'other than interleaved (and says nothing without one)',
    () => {
      const pipe = (parallel: Record<string, unknown>) =>
        resolved({
          ...base(),
          model: { preset: 'gpt3-175b' },
          training: { globalBatch: 64 },
          parallel: { tp: 8, ...parallel },
        });
      expect(pipe({ pp: 2, virtualStages: 3 }).warnings).toEqual([
        'parallel.virtualStages 3: ignored, the 1f1b schedule runs one model chunk per stage; ' +
          'set parallel.schedule: interleaved to use it',
      ]);
      expect(pipe({ pp: 2, virtualStages: 3, schedule: 'interleaved' }).warnings).toBeUndefined();
      // With pp 1 schedule and virtualStages are accepted and ignored, as the scenario contract says.
      expect(pipe({ pp: 1, virtualStages: 3 }).warnings).toBeUndefined();
    },
  );

  it(
    "warns when tp exceeds a grouped-query model's key/value heads (replicated here; " +
      'Megatron-LM refused it before core 0.16)',
    () => {
      const at = (tp: number) =>
        resolved({
          ...base(),
          cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
          model: { preset: 'llama2-70b' },
          training: { globalBatch: 16 },
          parallel: { tp },
        }).warnings;
      expect(at(16)).toEqual([
        expect.stringMatching(
          new RegExp(
            /^parallel\.tp 16 does not divide the model's 8 key\/value heads: /.source +
              /each TP rank is simulated with a copy of one.*Megatron-LM /.source +
              /refused it before core 0\.16.*not modelled$/.source,
          ),
        ),
      ]);
      expect(at(8)).toBeUndefined();
    },
  );

  it('gives DDP 25 MB buckets, a 1 MB first bucket and overlap', () => {
    expect(resolved(base()).parallel.ddp).toEqual({ bucketMB: 25, firstBucketMB: 1, overlap: true });
    expect(resolved({ ...base(), parallel: { ddp: { bucketMB: 50 } } }).parallel.ddp).toEqual({
      bucketMB: 50,
      firstBucketMB: 1,
      overlap: true,
    });
  });

  it('fills training, comm, seed, node count and name', () => {
    const s = resolved({ ...base(), cluster: { preset: 'dgx-a100-80gb' }, training: { globalBatch: 8 } });
    expect(s.training).toMatchObject({
      globalBatch: 8,
      microBatch: 1,
      precision: 'bf16',
      optimizer: 'adam',
      flashAttention: true,
      seqLen: 512,
    });
    expect(s.comm).toEqual({ algorithm: 'auto', protocol: 'auto', mode: 'aggregated', measured: [] });
    expect(s.seed).toBe(1);
    expect(s.cluster.nodes).toBe(1);
    expect(s.name).toBe('test');
  });

  it("brings the node preset's usual network when none is named", () => {
    expect(resolved(base()).cluster.network).toEqual(networkPreset('ib-hdr'));
    expect(
      resolved({ ...base(), cluster: { preset: 'pcie-8gpu' }, training: { globalBatch: 8 } }).cluster.network,
    ).toEqual(networkPreset('roce-100'));
  });

  it('takes the sequence length from the model unless training sets one', () => {
    expect(resolved(base()).model.seqLen).toBe(modelPreset('bert-large').seqLen);
    const s = resolved({ ...base(), training: { globalBatch: 64, seqLen: 128 } });
    expect(s.training.seqLen).toBe(128);
    expect(s.model.seqLen).toBe(128);
  });
});

describe('inline overrides on presets', () => {
  it('overrides one node field and keeps the rest of the preset', () => {
    const s = resolved({ ...base(), cluster: { preset: 'dgx-a100-80gb', nodes: 2, node: { nicsPerNode: 4 } } });
    const preset = nodePreset('dgx-a100-80gb');
    expect(s.cluster.node.nicsPerNode).toBe(4);
    expect(s.cluster.node.gpusPerNode).toBe(preset.gpusPerNode);
    expect(s.cluster.node.nvlinkBandwidthGBps).toBe(preset.nvlinkBandwidthGBps);
    expect(s.cluster.node.gpu).toEqual(preset.gpu);
  });

  it('overrides the GPU memory in GiB and marks the GPU as modified', () => {
    const s = resolved({ ...base(), cluster: { preset: 'dgx-a100-80gb', nodes: 2, gpu: { memoryGiB: 40 } } });
    const gpu = gpuPreset('a100-sxm4-80gb');
    expect(s.cluster.node.gpu.memoryBytes).toBe(40 * GiB);
    expect(s.cluster.node.gpu.peakTflops).toEqual(gpu.peakTflops);
    expect(s.cluster.node.gpu.hbmBandwidthGBps).toBe(gpu.hbmBandwidthGBps);
    expect(s.cluster.node.gpu.name).toBe('a100-sxm4-80gb (modified)');
  });

  it('merges partial peak TFLOP/s into the preset ones', () => {
    const s = resolved({
      ...base(),
      cluster: { preset: 'dgx-a100-80gb', nodes: 2, gpu: { peakTflops: { bf16: 100 } } },
    });
    expect(s.cluster.node.gpu.peakTflops).toEqual({ ...gpuPreset('a100-sxm4-80gb').peakTflops, bf16: 100 });
  });

  it('swaps the GPU of a node for another preset by name', () => {
    const s = resolved({ ...base(), cluster: { preset: 'dgx-a100-80gb', nodes: 2, gpu: 'a100-sxm4-40gb' } });
    expect(s.cluster.node.gpu).toEqual(gpuPreset('a100-sxm4-40gb'));
  });

  it("names the cluster's GPU when it is not the node preset's, and only then", () => {
    expect(
      resolved({ ...base(), cluster: { preset: 'pcie-8gpu', nodes: 1, gpu: 'a100-sxm4-80gb' } }).cluster.name,
    ).toBe('1× pcie-8gpu with a100-sxm4-80gb');
    expect(
      resolved({ ...base(), cluster: { preset: 'dgx-a100-80gb', nodes: 2, gpu: { memoryGiB: 40 } } }).cluster.name,
    ).toBe('2× dgx-a100-80gb with a100-sxm4-80gb (modified)');
    expect(resolved(base()).cluster.name).toBe('2× dgx-a100-80gb');
  });

  it('overrides one network field on the default network', () => {
    const s = resolved({ ...base(), cluster: { preset: 'dgx-a100-80gb', nodes: 2, network: { linkGbps: 100 } } });
    expect(s.cluster.network).toEqual({ ...networkPreset('ib-hdr'), linkGbps: 100 });
  });

  it('overrides a model preset field', () => {
    const s = resolved({ ...base(), model: { preset: 'llama2-7b', layers: 4 }, training: { globalBatch: 16 } });
    expect(s.model).toEqual({ ...modelPreset('llama2-7b'), layers: 4, name: 'llama2-7b (modified)' });
    // A training choice is no change of the model; a name given is kept.
    expect(
      resolved({ ...base(), model: { preset: 'llama2-7b', seqLen: 2048 }, training: { globalBatch: 16 } }).model.name,
    ).toBe('llama2-7b');
    expect(
      resolved({ ...base(), model: { preset: 'llama2-7b', layers: 4, name: 'tiny' }, training: { globalBatch: 16 } })
        .model.name,
    ).toBe('tiny');
  });

  it(
    'takes a head width of its own: heads need not divide hidden then, ' +
      'one equal to hidden / heads changes nothing',
    () => {
      const custom = resolved({
        ...base(),
        model: { arch: 'llama', layers: 2, hidden: 3072, heads: 16, headDim: 256, seqLen: 1024, vocab: 32000 },
        training: { globalBatch: 16 },
      }).model;
      expect(custom.headDim).toBe(256);
      expect(
        resolved({
          ...base(),
          model: {
            arch: 'llama',
            layers: 2,
            hidden: 3072,
            heads: 7,
            kvHeads: 7,
            headDim: 128,
            seqLen: 1024,
            vocab: 32000,
          },
          training: { globalBatch: 16 },
        }).model.heads,
      ).toBe(7);
      expect(
        problems({
          ...base(),
          model: { arch: 'llama', layers: 2, hidden: 3072, heads: 7, kvHeads: 7, seqLen: 1024, vocab: 32000 },
          training: { globalBatch: 16 },
        }),
      ).toEqual([
        {
          path: 'model.heads',
          message: '7 does not divide hidden (3072); give model.headDim if the heads have a width of their own',
        },
      ]);
      const same = resolved({
        ...base(),
        model: { preset: 'llama2-7b', headDim: 128 },
        training: { globalBatch: 16 },
      }).model;
      expect(same).toEqual(modelPreset('llama2-7b'));
      expect(
        resolved({ ...base(), model: { preset: 'llama2-7b', headDim: 256 }, training: { globalBatch: 16 } }).model.name,
      ).toBe('llama2-7b (modified)');
    },
  );

  it('keeps a multi-head preset multi-head when only the heads change, and a grouped one grouped', () => {
    const bert = resolved({
      ...base(),
      model: { preset: 'bert-large', heads: 4 },
      training: { globalBatch: 16 },
    }).model;
    expect([bert.heads, bert.kvHeads]).toEqual([4, 4]);
    const llama = resolved({
      ...base(),
      model: { preset: 'llama2-70b', heads: 32 },
      training: { globalBatch: 16 },
    }).model;
    expect([llama.heads, llama.kvHeads]).toEqual([32, modelPreset('llama2-70b').kvHeads]);
  });

  it('resolves a cluster section on its own, as collective does', () => {
    const c = resolveClusterSection({ preset: 'dgx-h100', nodes: 4, network: 'roce-400' }, 'command line');
    expect(c.nodes).toBe(4);
    expect(c.network).toEqual(networkPreset('roce-400'));
    expect(() => resolveClusterSection({ preset: 'dgx-h100', nodes: 0 }, 'command line')).toThrow(
      /cluster\.nodes: expected a whole number > 0, got 0/,
    );
  });
});

describe('inline models without a preset', () => {
  it('builds a transformer from its fields, with kvHeads, ffnHidden and tied embeddings defaulted', () => {
    const s = resolved({
      ...base(),
      model: { arch: 'gpt', layers: 4, hidden: 256, heads: 8, seqLen: 128, vocab: 1000 },
    });
    expect(s.model).toEqual({
      name: 'custom-gpt',
      arch: 'gpt',
      layers: 4,
      hidden: 256,
      heads: 8,
      kvHeads: 8,
      ffnHidden: 1024,
      seqLen: 128,
      vocab: 1000,
      tiedEmbeddings: true,
      mlpSizes: undefined,
    });
    expect(
      resolved({ ...base(), model: { arch: 'llama', layers: 2, hidden: 256, heads: 8, seqLen: 128, vocab: 1000 } })
        .model.tiedEmbeddings,
    ).toBe(false);
  });

  it('lists every required field that is missing, each with what it must be', () => {
    const p = problems({ ...base(), model: { arch: 'llama', hidden: 256 } });
    expect(p.map((x) => x.path)).toEqual(['model.layers', 'model.seqLen', 'model.vocab', 'model.heads']);
    for (const x of p)
      expect(x.message).toBe('is required when the model has no preset or hfConfig; expected a whole number > 0');
  });

  it('asks an empty model for its architecture with the allowed ones', () => {
    const p = problems({ ...base(), model: {} });
    expect(p).toContainEqual({
      path: 'model.arch',
      message: "is required when the model has no preset or hfConfig; expected one of 'gpt', 'llama', 'bert', 'mlp'",
    });
    expect(p.map((x) => x.path)).toEqual([
      'model.arch',
      'model.layers',
      'model.hidden',
      'model.seqLen',
      'model.vocab',
      'model.heads',
    ]);
  });

  it('asks an MLP for its layer sizes instead of heads', () => {
    const p = problems({ ...base(), model: { arch: 'mlp', layers: 2, hidden: 1024, seqLen: 1, vocab: 10 } });
    expect(p.map((x) => x.path)).toEqual(['model.mlpSizes']);
    expect(p[0].message).toContain('expected a list of at least 2 entries, each a whole number > 0');
  });

  it('rejects a preset together with an hfConfig', () => {
    expect(problems({ ...base(), model: { preset: 'llama2-7b', hfConfig: 'x.json' } })).toEqual([
      { path: 'model', message: 'give either preset or hfConfig, not both' },
    ]);
  });
});

describe('layers that do not split over the model chunks', () => {
  it(
    'blame virtualStages when pp divides the layers (32 over pp 4 × 3 chunks: ' +
      '8 a stage, which 3 chunks cannot split), pp otherwise',
    () => {
      const split = (parallel: Record<string, unknown>) =>
        problems({
          ...base(),
          cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: 4, nicsPerNode: 1 } },
          model: { arch: 'gpt', layers: 32, hidden: 1024, heads: 16, seqLen: 1024, vocab: 128 },
          training: { globalBatch: 8, microBatch: 1 },
          parallel,
        });
      const chunks = split({ pp: 4, schedule: 'interleaved', virtualStages: 3 });
      expect(chunks.map((x) => x.path)).toEqual(['parallel.virtualStages']);
      expect(chunks[0].message).toMatch(/change virtualStages \(to one dividing the 8 layers per stage\)$/);
      const stages = split({ pp: 3, schedule: 'interleaved', virtualStages: 2 });
      expect(stages.filter((x) => x.message.includes('do not split evenly')).map((x) => x.path)).toEqual([
        'parallel.pp',
      ]);
    },
  );
});

describe('a split that does not divide the GPUs', () => {
  it('is the only problem: nothing is checked against a data-parallel size derived from it', () => {
    // 16 GPUs over tp 1 × pp 3: no whole dp (5 if rounded down, and 70 / 5 = 14 micro-batches, not a multiple of 3), so
    // neither the batch nor the interleaved micro-batch count is checked.
    const p = problems({
      ...base(),
      model: { preset: 'gpt3-1.3b' },
      training: { globalBatch: 70, microBatch: 1 },
      parallel: { pp: 3, schedule: 'interleaved', virtualStages: 2 },
    });
    expect(p.map((x) => x.path)).not.toContain('training.globalBatch');
    expect(p).toContainEqual(
      expect.objectContaining({
        path: 'parallel',
        message: expect.stringMatching(/does not divide the cluster's 16 GPUs/),
      }),
    );
  });
});

describe('hfConfig', () => {
  const llama2Fields = (m: Scenario['model']) => ({
    arch: m.arch,
    layers: m.layers,
    hidden: m.hidden,
    heads: m.heads,
    kvHeads: m.kvHeads,
    ffnHidden: m.ffnHidden,
    seqLen: m.seqLen,
    vocab: m.vocab,
    tiedEmbeddings: m.tiedEmbeddings,
  });

  it('reads the config relative to the folder it is given, giving the same model as the preset', () => {
    const s = resolved(
      { ...base(), model: { hfConfig: 'models/llama2-7b.config.json' }, training: { globalBatch: 16 } },
      join(ROOT, 'scenarios'),
    );
    expect(llama2Fields(s.model)).toEqual(llama2Fields(modelPreset('llama2-7b')));
    // The config's max_position_embeddings stood in for the training length: the scenario says so.
    expect(s.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          /^training\.seqLen not given: using the longest sequence /.source +
            /models\/llama2-7b\.config\.json allows \(max_position_embeddings or n_positions, 4096\)/.source,
        ),
      ),
    ]);
    // A config that allows more than 4,096 positions trains at 4,096 unless told otherwise (issue 26, item 15): not the
    // 131,072 of a long-context config, whose first result was a 647 GiB OOM.
    const dir131k = mkdtempSync(join(tmpdir(), 'hf-131k-'));
    const long = { ...JSON.parse(readFileSync(LLAMA_CONFIG, 'utf8')), max_position_embeddings: 131072 };
    writeFileSync(join(dir131k, 'config.json'), JSON.stringify(long));
    const longRun = resolved({ ...base(), model: { hfConfig: 'config.json' }, training: { globalBatch: 16 } }, dir131k);
    expect(longRun.training.seqLen).toBe(4096);
    expect(longRun.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          /^training\.seqLen not given: using 4096 tokens, /.source +
            /the length most pretraining runs at, not the 131072 positions config\.json allows/.source,
        ),
      ),
    ]);
    const given = resolved(
      { ...base(), model: { hfConfig: 'models/llama2-7b.config.json' }, training: { globalBatch: 16, seqLen: 2048 } },
      join(ROOT, 'scenarios'),
    );
    expect(given.warnings).toBeUndefined();
  });

  it('resolves a relative hfConfig from the scenario file, not from the working directory', () => {
    const sub = join(dir, 'project');
    mkdirSync(join(sub, 'models'), { recursive: true });
    copyFileSync(LLAMA_CONFIG, join(sub, 'models', 'llama2-7b.config.json'));
    const path = join(sub, 'llama.yaml');
    writeFileSync(
      path,
      'cluster: { preset: hgx-h200, nodes: 2 }\n' +
        'model: { hfConfig: models/llama2-7b.config.json, seqLen: 2048 }\n' +
        'training: { globalBatch: 16 }\n',
    );
    const file = loadScenarioFile(path);
    expect(file.baseDir).toBe(dirname(path));
    expect(process.cwd()).not.toBe(sub);
    const s = resolveScenario(file.raw, file.source, file.baseDir);
    expect(llama2Fields(s.model)).toEqual({ ...llama2Fields(modelPreset('llama2-7b')), seqLen: 2048 });
    expect(s.name).toBe('llama');
  });

  it('reports an hfConfig that is not there at model.hfConfig, with the folder it looked in', () => {
    const p = problems({ ...base(), model: { hfConfig: 'models/llama2-7b.config.json' } }, dir);
    expect(p).toHaveLength(1);
    expect(p[0].path).toBe('model.hfConfig');
    expect(p[0].message).toContain(
      `cannot read Hugging Face config '${join(dir, 'models/llama2-7b.config.json')}': no such file`,
    );
    expect(p[0].message).toContain(`scenario file's folder, ${dir}`);
  });
});

describe('comm.measured (nccl-tests tables of the machine)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'clustersim-measured-'));
    writeFileSync(
      join(dir, 'ar8.txt'),
      '#  size count type redop root time algbw busbw #wrong\n' +
        ' 1048576 262144 float sum -1 92.79 11.30 19.78 0\n' +
        ' 2097152 524288 float sum -1 93.25 22.49 39.36 0\n',
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads each table relative to the scenario folder', () => {
    const s = resolved({ ...base(), comm: { measured: [{ op: 'all_reduce', ranks: 8, file: 'ar8.txt' }] } }, dir);
    expect(s.comm.measured).toEqual([
      {
        op: 'all_reduce',
        ranks: 8,
        source: 'ar8.txt',
        points: [
          { bytes: 1048576, timeNs: 92790 },
          { bytes: 2097152, timeNs: 93250 },
        ],
      },
    ]);
  });

  it('reports every bad entry at its path: a missing file, times that cannot be real (µs labelled ns)', () => {
    writeFileSync(join(dir, 'units.csv'), 'size(B),time(ns)\n1048576,92.79\n');
    const p = problems(
      {
        ...base(),
        comm: {
          measured: [
            { op: 'all_reduce', ranks: 8, file: 'nope.txt' },
            { op: 'all_reduce', ranks: 8, file: 'units.csv' },
          ],
        },
      },
      dir,
    );
    expect(p.map((x) => x.path)).toEqual(['comm.measured.0.file', 'comm.measured.1.file']);
    expect(p[0].message).toContain("cannot read 'nope.txt'");
    expect(p[1].message).toMatch(
      new RegExp(
        /'units\.csv': 1048576 B in 92\.79 ns is \d+ GB\/s of bus bandwidth, /.source +
          /more than 1\.5× the node's 230 GB\/s links; are the times in µs but labelled ns\?/.source,
      ),
    );
  });

  it('keeps a table larger than the node (it then never applies), so sweeps can go below a node', () => {
    const s = resolved(
      {
        ...base(),
        cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: 4 } },
        training: { globalBatch: 64 },
        comm: { measured: [{ op: 'all_reduce', ranks: 8, file: 'ar8.txt' }] },
      },
      dir,
    );
    expect(s.comm.measured.map((t) => t.ranks)).toEqual([8]);
  });

  it('reads an edited file again', () => {
    const raw = { ...base(), comm: { measured: [{ op: 'all_reduce', ranks: 8, file: 'edit.txt' }] } };
    writeFileSync(join(dir, 'edit.txt'), ' 1048576 262144 float sum -1 92.79 11.30 19.78 0 92.15 11.38 19.91 0\n');
    expect(resolved(raw, dir).comm.measured[0].points[0].timeNs).toBe(92790);
    writeFileSync(join(dir, 'edit.txt'), ' 1048576 262144 float sum -1 192.79 5.44 9.52 0 192.15 5.46 9.55 0\n');
    expect(resolved(raw, dir).comm.measured[0].points[0].timeNs).toBe(192790);
  });
});

describe('training.optimizerState', () => {
  const withState = (training: Record<string, unknown>) => ({ ...base(), training: { globalBatch: 64, ...training } });

  it('is absent from the resolved scenario when everything is fp32, so nothing downstream changes', () => {
    expect(resolved(base()).training.optimizerState).toBeUndefined();
    expect(resolved(withState({ optimizerState: { momentum: 'fp32' } })).training.optimizerState).toBeUndefined();
    expect(resolved(withState({ optimizerState: { momentum: 'bf16' } })).training.optimizerState).toEqual({
      masterWeights: 'fp32',
      momentum: 'bf16',
      variance: 'fp32',
    });
  });

  it('refuses types the precision or the optimizer has no place for, naming the field and what to do', () => {
    expect(problems(withState({ precision: 'fp32', optimizerState: { masterWeights: 'bf16' } }))).toEqual([
      expect.objectContaining({
        path: 'training.optimizerState.masterWeights',
        message: expect.stringMatching(/training.precision fp32 keeps no master copy/),
      }),
    ]);
    expect(problems(withState({ precision: 'fp16', optimizerState: { masterWeights: 'remainders' } }))).toEqual([
      expect.objectContaining({
        path: 'training.optimizerState.masterWeights',
        message: expect.stringMatching(/needs training.precision bf16 \(not fp16\)/),
      }),
    ]);
    expect(problems(withState({ optimizer: 'sgd', optimizerState: { variance: 'bf16' } }))).toEqual([
      expect.objectContaining({
        path: 'training.optimizerState.variance',
        message: expect.stringMatching(/training.optimizer sgd keeps no variance/),
      }),
    ]);
    expect(problems(withState({ optimizerState: { momentum: 'int8' } }))[0].path).toBe(
      'training.optimizerState.momentum',
    );
    expect(
      problems({ ...withState({ optimizerState: { momentum: 'bf16' } }), parallel: { zero: 2, offload: 'cpu' } }),
    ).toEqual([
      expect.objectContaining({
        path: 'training.optimizerState',
        message: expect.stringMatching(/host Adam keeps its state in fp32/),
      }),
    ]);
  });
});

describe('sequence parallelism and the TP style', () => {
  // Korthikanti et al. 2022 §4.2.2: sequence parallelism splits Megatron's TP all-reduce into a reduce-scatter and an
  // all-gather; the all-gather style replicates every linear's output and has no such split.
  it('refuses sequence parallelism with tpStyle allgather, and takes it with megatron', () => {
    const par = (tpStyle: string) => ({ ...base(), parallel: { tp: 8, sequenceParallel: true, tpStyle } });
    expect(problems(par('allgather'))).toEqual([
      expect.objectContaining({
        path: 'parallel.sequenceParallel',
        message: expect.stringMatching(/tpStyle allgather .* has no such split/),
      }),
    ]);
    expect(resolved(par('megatron')).parallel.sequenceParallel).toBe(true);
  });
});
