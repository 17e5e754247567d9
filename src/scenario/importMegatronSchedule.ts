import { ScenarioError } from '../sim/errors.js';
import type { ImportCollector } from './importResult.js';
import { SOURCE, type MegatronArgs } from './importMegatronFlags.js';

/**
 * The interleaved schedule from Megatron-LM's arguments, as `validate_args` (megatron/training/arguments.py) derives
 * and checks it: the model chunks per pipeline rank come from `--num-layers-per-virtual-pipeline-stage` (layers / pp
 * / n), from `--num-virtual-stages-per-pipeline-rank` (today's name for the count), or from the early
 * `--virtual-pipeline-model-parallel-size`; no more than one of the first two may be given; one chunk is no
 * interleaving; and interleaving needs pp > 1, and pp > 2 when `--no-overlap-p2p-communication` turns the overlap
 * of the pipeline's sends off ("to avoid having multiple p2p sends and recvs between same 2 ranks per
 * communication batch").
 * @throws ScenarioError for what Megatron refuses
 */
export function importVirtualStages(c: ImportCollector, a: MegatronArgs, pp: number, layers: number | undefined): void {
  const int = (f: string) => a.int(f);
  const flagText = (f: string) => a.shown(f);
  const perStage = int('num-layers-per-virtual-pipeline-stage');
  const perRank = int('num-virtual-stages-per-pipeline-rank');
  const vpp = int('virtual-pipeline-model-parallel-size');
  if (perStage !== undefined && perRank !== undefined) {
    throw new ScenarioError(
      '',
      `${SOURCE}: ${flagText('num-layers-per-virtual-pipeline-stage')} and ` +
        `${flagText('num-virtual-stages-per-pipeline-rank')}: Megatron refuses both at once ` +
        '("No more than one of the following arguments can be set at the same time"); give one of them',
    );
  }
  let v = perRank ?? vpp;
  let from = perRank
    ? flagText('num-virtual-stages-per-pipeline-rank')
    : vpp
      ? flagText('virtual-pipeline-model-parallel-size')
      : '';
  if (perStage) {
    // validate_args: virtual_pipeline_model_parallel_size = (num_layers // pp) //
    // num_layers_per_virtual_pipeline_stage.
    if (layers === undefined)
      throw new ScenarioError(
        '',
        `${SOURCE}: --num-layers-per-virtual-pipeline-stage needs --num-layers ` +
          '(or a model with a layer count in the scenario) to give the number of model chunks',
      );
    if (layers % pp !== 0 || (layers / pp) % perStage !== 0) {
      throw new ScenarioError(
        '',
        `${SOURCE}: --num-layers-per-virtual-pipeline-stage ${perStage} does not divide the ${layers / pp} layers ` +
          `per pipeline stage (${layers} layers / --pipeline-model-parallel-size ${pp})`,
      );
    }
    const derived = layers / pp / perStage;
    if (vpp !== undefined && vpp !== derived) {
      throw new ScenarioError(
        '',
        `${SOURCE}: --virtual-pipeline-model-parallel-size ${vpp} disagrees with ` +
          `--num-layers-per-virtual-pipeline-stage ${perStage} ` +
          `(${layers} layers / pp ${pp} / ${perStage} = ${derived} chunks); give one of them`,
      );
    }
    v = derived;
    from = `${flagText('num-layers-per-virtual-pipeline-stage')}: ${layers} layers / pp ${pp} / ${perStage}`;
  }
  // validate_args sets one chunk back to no interleaving, then refuses interleaving over too few pipeline stages.
  const interleaved = v !== undefined && v > 1;
  const noOverlap = a.has('no-overlap-p2p-communication');
  if (interleaved && (pp === 1 || (pp === 2 && noOverlap))) {
    const why =
      pp === 1
        ? 'pipeline-model-parallel size should be greater than 1'
        : 'with --no-overlap-p2p-communication, pipeline-model-parallel size should be greater than 2';
    throw new ScenarioError(
      '',
      `${SOURCE}: ${from} (${v} model chunks per pipeline rank) with --pipeline-model-parallel-size ${pp}: ` +
        `Megatron refuses it (when the interleaved schedule is used, ${why}); ` +
        `drop the virtual-pipeline flag${pp === 2 ? ' or --no-overlap-p2p-communication' : ''}`,
    );
  }
  c.set(
    'parallel.schedule',
    interleaved ? 'interleaved' : '1f1b',
    interleaved ? from : 'Megatron default',
    !interleaved,
  );
  c.set('parallel.virtualStages', interleaved ? v! : 1, interleaved ? from : 'Megatron default', !interleaved);
}

/**
 * How Megatron-LM splits the layers over the pipeline stages: evenly (the default); evenly with the embedding and the
 * loss counted as a layer each (`--account-for-embedding-in-pipeline-split`, `--account-for-loss-in-pipeline-split`,
 * `get_transformer_layer_offset` in megatron/core/transformer/transformer_layer.py); or with `--decoder-first-` and
 * `--decoder-last-pipeline-num-layers` on the first and the last stage and the rest dealt evenly over the middle ones.
 * @throws ScenarioError for a split that does not add up, or both kinds at once
 */
export function importPipelineSplit(c: ImportCollector, a: MegatronArgs, pp: number, layers: number | undefined): void {
  const embedding = a.has('account-for-embedding-in-pipeline-split');
  const loss = a.has('account-for-loss-in-pipeline-split');
  // Not given: removed, so the scenario's default (false) applies and the summary only mentions a file's own setting.
  c.set(
    'parallel.accountForEmbeddingInSplit',
    embedding || undefined,
    embedding ? '--account-for-embedding-in-pipeline-split' : 'Megatron default',
    !embedding,
  );
  c.set(
    'parallel.accountForLossInSplit',
    loss || undefined,
    loss ? '--account-for-loss-in-pipeline-split' : 'Megatron default',
    !loss,
  );
  const first = a.int('decoder-first-pipeline-num-layers');
  const last = a.int('decoder-last-pipeline-num-layers');
  if (first === undefined && last === undefined) {
    c.set('parallel.layersPerStage', undefined, 'Megatron splits layers evenly', true);
    return;
  }
  const given = [
    first !== undefined ? a.shown('decoder-first-pipeline-num-layers') : '',
    last !== undefined ? a.shown('decoder-last-pipeline-num-layers') : '',
  ]
    .filter(Boolean)
    .join(' ');
  if (embedding || loss)
    throw new ScenarioError(
      '',
      `${SOURCE}: ${given} with --account-for-${embedding ? 'embedding' : 'loss'}-in-pipeline-split: ` +
        'the one sets the uneven split, the other changes the even split; give one of them',
    );
  if (layers === undefined)
    throw new ScenarioError(
      '',
      `${SOURCE}: ${given} needs --num-layers (or a model with a layer count in the scenario) ` +
        'to split the rest over the middle stages',
    );
  const middle = pp - (first !== undefined ? 1 : 0) - (last !== undefined ? 1 : 0);
  const rest = layers - (first ?? 0) - (last ?? 0);
  if (middle < 0 || (middle === 0 ? rest !== 0 : rest < 0 || rest % middle !== 0)) {
    throw new ScenarioError(
      '',
      `${SOURCE}: ${given} leaves ${rest} of the ${layers} layers for ${Math.max(middle, 0)} middle stage(s) ` +
        `of --pipeline-model-parallel-size ${pp}, which does not split evenly; Megatron refuses it`,
    );
  }
  const counts = Array.from({ length: pp }, (_, s) =>
    s === 0 && first !== undefined ? first : s === pp - 1 && last !== undefined ? last : rest / middle,
  );
  c.set('parallel.layersPerStage', counts, given);
}
