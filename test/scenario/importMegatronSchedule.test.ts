import { describe, expect, it } from 'vitest';
import { importMegatronArgs } from '../../src/scenario/importMegatron.js';
import type { ImportResult } from '../../src/scenario/importResult.js';

const fieldsOf = (r: ImportResult) => Object.fromEntries(r.fields.map((f) => [f.path, f.value]));
const errorOf = (f: () => unknown): Error => {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
};

// megatron/training/arguments.py validate_args (NVIDIA/Megatron-LM main): --num-virtual-stages-per-pipeline-rank gives
// the chunks per rank directly; it and --num-layers-per-virtual-pipeline-stage are mutually exclusive; one chunk is no
// interleaving; interleaving needs pp > 1, and pp > 2 when --no-overlap-p2p-communication turns p2p overlap off.
describe('importMegatronArgs: the interleaved schedule as Megatron validates it', () => {
  it('reads --num-virtual-stages-per-pipeline-rank as the number of model chunks per pipeline rank', () => {
    const r = importMegatronArgs(
      '--num-layers 80 --pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 5',
    );
    expect(fieldsOf(r)).toMatchObject({ 'parallel.schedule': 'interleaved', 'parallel.virtualStages': 5 });
    expect(r.warnings.join('\n')).not.toMatch(/unknown Megatron flags/);
    expect(
      fieldsOf(importMegatronArgs('--pipeline-model-parallel-size 4 --num-virtual-stages-per-pipeline-rank 1')),
    ).toMatchObject({ 'parallel.schedule': '1f1b', 'parallel.virtualStages': 1 });
  });

  it('refuses both ways of giving the chunks at once', () => {
    expect(
      errorOf(() =>
        importMegatronArgs(
          '--num-layers 80 --pipeline-model-parallel-size 4 ' +
            '--num-layers-per-virtual-pipeline-stage 4 --num-virtual-stages-per-pipeline-rank 5',
        ),
      ).message,
    ).toMatch(/Megatron refuses both at once/);
  });

  it('refuses interleaving over one pipeline stage, and over two without p2p overlap, as Megatron does', () => {
    expect(
      errorOf(() =>
        importMegatronArgs(
          '--num-layers 96 --pipeline-model-parallel-size 1 --num-layers-per-virtual-pipeline-stage 12',
        ),
      ).message,
    ).toMatch(/--pipeline-model-parallel-size 1: Megatron refuses it/);
    expect(
      errorOf(() =>
        importMegatronArgs(
          '--num-layers 96 --pipeline-model-parallel-size 2 ' +
            '--num-layers-per-virtual-pipeline-stage 12 --no-overlap-p2p-communication',
        ),
      ).message,
    ).toMatch(/greater than 2/);
    // p2p overlap is on by default in Megatron, so pp 2 interleaves.
    expect(
      fieldsOf(
        importMegatronArgs(
          '--num-layers 96 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 12',
        ),
      ),
    ).toMatchObject({ 'parallel.virtualStages': 4 });
    // One chunk per rank is no interleaving, which pp 1 allows.
    expect(fieldsOf(importMegatronArgs('--num-layers 96 --num-layers-per-virtual-pipeline-stage 96'))).toMatchObject({
      'parallel.schedule': '1f1b',
    });
  });
});

// megatron/core/transformer/transformer_layer.py get_transformer_layer_offset and transformer_block.py: with
// --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split the split counts the embedding and
// the loss as a layer each; --decoder-first-/--decoder-last-pipeline-num-layers fix the first and the last stage and
// deal the rest evenly over the middle stages.
describe('importMegatronArgs: how the layers split over the pipeline', () => {
  it('reads the embedding and the loss counted as layers', () => {
    const r = importMegatronArgs(
      '--num-layers 126 --pipeline-model-parallel-size 16 ' +
        '--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split',
    );
    expect(fieldsOf(r)).toMatchObject({
      'parallel.accountForEmbeddingInSplit': true,
      'parallel.accountForLossInSplit': true,
      'parallel.layersPerStage': undefined,
    });
    expect(r.warnings.join('\n')).not.toMatch(/unknown|not modelled/);
    // Without the flags a file's own setting is dropped: the even split Megatron makes by default.
    expect(fieldsOf(importMegatronArgs('--num-layers 126'))).toMatchObject({
      'parallel.accountForEmbeddingInSplit': undefined,
      'parallel.accountForLossInSplit': undefined,
    });
  });

  it('turns the first and last stage sizes into per-stage counts, the middle stages sharing the rest', () => {
    const r = importMegatronArgs(
      '--num-layers 30 --pipeline-model-parallel-size 4 ' +
        '--decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 4',
    );
    expect(fieldsOf(r)['parallel.layersPerStage']).toEqual([6, 10, 10, 4]);
    expect(
      fieldsOf(
        importMegatronArgs('--num-layers 30 --pipeline-model-parallel-size 4 --decoder-last-pipeline-num-layers 6'),
      )['parallel.layersPerStage'],
    ).toEqual([8, 8, 8, 6]);
  });

  it(
    'refuses a first/last split that leaves the middle stages an uneven share, ' +
      'or one given with the counted slots',
    () => {
      expect(
        errorOf(() =>
          importMegatronArgs('--num-layers 30 --pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 5'),
        ).message,
      ).toMatch(/leaves 25 of the 30 layers for 3 middle stage\(s\).*does not split evenly/);
      expect(
        errorOf(() =>
          importMegatronArgs(
            '--num-layers 30 --pipeline-model-parallel-size 4 ' +
              '--decoder-first-pipeline-num-layers 6 --account-for-loss-in-pipeline-split',
          ),
        ).message,
      ).toMatch(/give one of them/);
    },
  );
});
