import { describe, expect, it } from 'vitest';
import { base, resolved } from './resolveFixtures.js';
import { applyOverrides } from '../../src/scenario/load.js';
import { ScenarioError } from '../../src/sim/errors.js';
import { networkPreset } from '../../src/sim/hardware/presets.js';

describe('--set overrides', () => {
  it('reads values as YAML, so numbers, booleans, lists and quoted text come out typed', () => {
    const raw = applyOverrides(base(), [
      'parallel.ddp.bucketMB=5',
      'parallel.ddp.overlap=false',
      'comm.mode=step',
      'model.mlpSizes=[1024, 512, 10]',
      'name="123"',
      'training.globalBatch = 128',
    ]) as Record<string, Record<string, unknown>>;
    expect(raw.parallel).toEqual({ ddp: { bucketMB: 5, overlap: false } });
    expect(raw.comm).toEqual({ mode: 'step' });
    expect(raw.model.mlpSizes).toEqual([1024, 512, 10]);
    expect(raw.name).toBe('123');
    expect(raw.training.globalBatch).toBe(128);
  });

  it('creates missing sections on the way down and keeps their siblings', () => {
    const raw = applyOverrides(base(), ['parallel.ddp.firstBucketMB=2', 'cluster.node.nicsPerNode=4']) as Record<
      string,
      Record<string, unknown>
    >;
    expect(raw.parallel).toEqual({ ddp: { firstBucketMB: 2 } });
    expect(raw.cluster).toEqual({ preset: 'dgx-a100-80gb', nodes: 2, node: { nicsPerNode: 4 } });
  });

  it('leaves the scenario it was given untouched', () => {
    const original = base();
    applyOverrides(original, ['training.globalBatch=8', 'parallel.dp=16']);
    expect(original).toEqual(base());
  });

  it("warns of a sequence past a model's learned positions (BERT, GPT), not past rotary ones (Llama)", () => {
    const bert = resolved({
      ...base(),
      model: { preset: 'bert-large' },
      training: { ...(base().training as object), seqLen: 1024 },
    });
    expect(bert.warnings).toContain(
      'training.seqLen 1024 is longer than the 512 learned positions of bert-large, which has none past them; ' +
        'simulated all the same (set model.seqLen: 1024 for a model with that many)',
    );
    const told = resolved({
      ...base(),
      model: { preset: 'bert-large', seqLen: 1024 },
      training: { ...(base().training as object), seqLen: 1024 },
    });
    expect(told.warnings ?? []).toEqual([]);
    const llama = resolved({
      ...base(),
      model: { preset: 'llama2-7b' },
      training: { ...(base().training as object), seqLen: 32768 },
    });
    expect((llama.warnings ?? []).some((w) => w.includes('learned positions'))).toBe(false);
  });

  it("takes a field out with null, so that its default applies (a file's dp after a change of nodes)", () => {
    const raw = applyOverrides({ ...base(), parallel: { dp: 8, tp: 1 } }, [
      'parallel.dp=null',
      'training.seed=~',
    ]) as Record<string, Record<string, unknown>>;
    expect('dp' in raw.parallel).toBe(false);
    expect(raw.parallel.tp).toBe(1);
    expect('seed' in raw.training).toBe(false);
    // An empty value (an unset shell variable) is not a removal: it stays null, for the field's check to refuse.
    const empty = applyOverrides(base(), ['training.globalBatch=']) as Record<string, Record<string, unknown>>;
    expect(empty.training.globalBatch).toBe(null);
  });

  it('shows the mapping form only where it works: one field, not a deeper path or a removal', () => {
    const raw = { ...base(), cluster: { preset: 'pcie-8gpu', gpu: 'a100-sxm4-80gb' } };
    for (const set of ['cluster.gpu.peakTflops.bf16=300', 'cluster.gpu.memoryGiB=null']) {
      expect(() => applyOverrides(raw, [set])).toThrow(/not a mapping, so it has no field '\w+'$/);
    }
  });

  it('shows the mapping form when a field of a preset named by a string is set', () => {
    expect(() =>
      applyOverrides({ ...base(), cluster: { preset: 'pcie-8gpu', gpu: 'a100-sxm4-80gb' } }, [
        'cluster.gpu.memoryGiB=40',
      ]),
    ).toThrow(
      "--set 'cluster.gpu.memoryGiB=40': 'cluster.gpu' is \"a100-sxm4-80gb\", " +
        "not a mapping, so it has no field 'memoryGiB'; to change one field of it, " +
        "give the mapping form: --set 'cluster.gpu={preset: a100-sxm4-80gb, memoryGiB: 40}'",
    );
  });

  it('applies later overrides over earlier ones', () => {
    const raw = applyOverrides(base(), ['training.microBatch=2', 'training.microBatch=4']) as Record<
      string,
      Record<string, unknown>
    >;
    expect(raw.training.microBatch).toBe(4);
  });

  it('overrides a preset, and the resolved scenario uses the new one', () => {
    const s = resolved(applyOverrides(base(), ['cluster.preset=dgx-h100', 'parallel.ddp.bucketMB=5']));
    expect(s.cluster.node.name).toBe('dgx-h100');
    expect(s.cluster.network).toEqual(networkPreset('ib-ndr'));
    expect(s.parallel.ddp).toEqual({ bucketMB: 5, firstBucketMB: 1, overlap: true });
  });

  it('rejects a malformed override with a ScenarioError naming it', () => {
    expect(() => applyOverrides(base(), ['nodes'])).toThrow(/--set 'nodes': expected path=value/);
    expect(() => applyOverrides(base(), ['training.globalBatch.x=1'])).toThrow(ScenarioError);
    expect(() => applyOverrides(base(), ['model.mlpSizes=[1'])).toThrow(/is not valid YAML/);
  });

  it('sets and removes one element of a list by its index, and refuses an index the list does not have', () => {
    const raw = {
      ...base(),
      parallel: { pp: 2, layersPerStage: [12, 12] },
      comm: { measured: [{ op: 'all_reduce', ranks: 8, file: 'a.txt' }] },
    };
    expect(applyOverrides(raw, ['parallel.layersPerStage.0=11'])).toMatchObject({
      parallel: { layersPerStage: [11, 12] },
    });
    expect(applyOverrides(raw, ['comm.measured.0.file=b.txt'])).toMatchObject({
      comm: { measured: [{ op: 'all_reduce', ranks: 8, file: 'b.txt' }] },
    });
    expect(
      (applyOverrides(raw, ['parallel.layersPerStage.1=null']) as { parallel: { layersPerStage: number[] } }).parallel
        .layersPerStage,
    ).toEqual([12]);
    expect(raw.parallel.layersPerStage).toEqual([12, 12]);
    expect(() => applyOverrides(raw, ['parallel.layersPerStage.2=1'])).toThrow(
      /is a list of 2, so '2' names no element of it; use an index from 0 to 1/,
    );
    expect(() => applyOverrides(raw, ['comm.measured.x.file=b.txt'])).toThrow(
      /is a list of 1, so 'x' names no element/,
    );
  });
});
