import { ScenarioError } from '../sim/errors.js';
import type { ImportCollector } from './importResult.js';
import { SOURCE, type MegatronArgs } from './importMegatronFlags.js';

/** Megatron-Core's default --moe-router-topk (arguments.py). */
const MEGATRON_DEFAULT_TOPK = 2;

/**
 * The mixture-of-experts flags of a Megatron-LM command line (megatron/training/arguments.py, `_add_moe_args`): the
 * experts, top-k, expert width, shared experts, which layers have experts, and expert parallelism. What the simulator
 * does not model is refused, never run as something else: a token dispatcher other than `alltoall` or flex with DeepEP
 * where one is used. A capacity factor sets `training.routing.capacityFactor` (with balanced routing it drops nothing
 * unless below 1).
 * @throws ScenarioError naming the flag
 */
export function importMoe(c: ImportCollector, a: MegatronArgs, tp: number): void {
  const experts = a.int('num-experts');
  const ep = a.int('expert-model-parallel-size') ?? 1;
  if (experts === undefined) {
    if (ep > 1)
      refuse(`${a.shown('expert-model-parallel-size')} without --num-experts: a dense model has no experts to split`);
    return;
  }
  c.set('model.moe.experts', experts, a.shown('num-experts'));
  const topK = a.int('moe-router-topk');
  c.set(
    'model.moe.topK',
    topK ?? MEGATRON_DEFAULT_TOPK,
    topK ? a.shown('moe-router-topk') : 'Megatron default: top 2',
    !topK,
  );
  const width = a.int('moe-ffn-hidden-size') ?? a.int('ffn-hidden-size');
  if (width)
    c.set(
      'model.moe.expertFfnHidden',
      width,
      a.has('moe-ffn-hidden-size')
        ? a.shown('moe-ffn-hidden-size')
        : `${a.shown('ffn-hidden-size')} (Megatron's default expert width)`,
    );
  if (!a.has('moe-grouped-gemm'))
    c.warn(
      'no --moe-grouped-gemm: Megatron runs one GEMM pair per local expert (SequentialMLP); ' +
        'simulated as a grouped GEMM of the same shapes, without the per-expert launches',
    );
  const shared = a.int('moe-shared-expert-intermediate-size');
  if (shared) c.set('model.moe.sharedExpertFfnHidden', shared, a.shown('moe-shared-expert-intermediate-size'));
  const dense = denseLayersOf(a.pick('moe-layer-freq'));
  if (dense !== undefined) c.set('model.moe.denseLayers', dense, a.shown('moe-layer-freq'));
  if (ep > 1) c.set('parallel.ep', ep, a.shown('expert-model-parallel-size'));
  const etp = a.int('expert-tensor-parallel-size');
  if (etp !== undefined && etp !== tp) c.set('parallel.etp', etp, a.shown('expert-tensor-parallel-size'));
  importDispatcher(c, a, ep > 1 || tp > 1);
  importRoutingGroups(c, a);
  importExpertOverlap(c, a);
  const capacity = a.pick('moe-expert-capacity-factor');
  if (capacity !== undefined) {
    const factor = Number(capacity);
    if (!(factor > 0)) refuse(`${a.shown('moe-expert-capacity-factor')}: expected a positive number`);
    c.set('training.routing.capacityFactor', factor, a.shown('moe-expert-capacity-factor'));
    if (a.has('moe-pad-expert-input-to-capacity'))
      c.set('training.routing.padToCapacity', true, '--moe-pad-expert-input-to-capacity');
  } else if (a.has('moe-pad-expert-input-to-capacity'))
    refuse('--moe-pad-expert-input-to-capacity without --moe-expert-capacity-factor: there is no capacity to pad to');
}

/**
 * The dense layers at the start that `--moe-layer-freq` gives: `1` (every layer has experts) or the list form
 * `([0]*k+[1]*n)` (the first k dense); any other pattern is refused. Undefined when the flag is absent.
 */
function denseLayersOf(freq: string | undefined): number | undefined {
  if (freq === undefined) return undefined;
  const compact = freq.replace(/\s+/g, '');
  if (compact === '1') return 0;
  const list = /^\(?\[0\]\*(\d+)\+\[1\]\*(\d+)\)?$/.exec(compact);
  if (list) return Number(list[1]);
  refuse(
    `--moe-layer-freq ${freq}: only experts in every layer ('1') or after k dense layers ('([0]*k+[1]*n)') ` +
      'are modelled',
  );
}

function refuse(message: string): never {
  throw new ScenarioError('', `${SOURCE}: ${message}`);
}

/**
 * The token dispatcher where ranks exchange tokens: `alltoall`, or `flex` with DeepEP (--moe-flex-dispatcher-backend
 * deepep, or the older --moe-enable-deepep) as parallel.dispatcher deepep. Megatron's default (allgather), flex with
 * another backend (hybridep) and alltoall_seq are refused.
 */
function importDispatcher(c: ImportCollector, a: MegatronArgs, exchanges: boolean): void {
  const dispatcher = a.pick('moe-token-dispatcher-type');
  const backend = a.pick('moe-flex-dispatcher-backend') ?? (a.has('moe-enable-deepep') ? 'deepep' : undefined);
  if (dispatcher === 'flex' && backend === 'deepep') {
    c.set('parallel.dispatcher', 'deepep', `${a.shown('moe-token-dispatcher-type')} with DeepEP`);
    return;
  }
  if (!exchanges || dispatcher === 'alltoall') return;
  const withBackend = dispatcher === 'flex' ? ` with backend ${backend ?? 'none given'}` : '';
  const named = dispatcher
    ? `${a.shown('moe-token-dispatcher-type')}${withBackend}`
    : 'no --moe-token-dispatcher-type (Megatron default: allgather)';
  refuse(
    `${named}: the alltoall token dispatcher and flex with DeepEP are modelled; ` +
      'add --moe-token-dispatcher-type alltoall, or flex with --moe-flex-dispatcher-backend deepep',
  );
}

/** Group-limited routing: --moe-router-num-groups groups, --moe-router-group-topk of them a token. */
function importRoutingGroups(c: ImportCollector, a: MegatronArgs): void {
  const groups = a.int('moe-router-num-groups');
  const topk = a.int('moe-router-group-topk');
  if (groups === undefined && topk === undefined) return;
  if (groups === undefined || topk === undefined)
    refuse('--moe-router-num-groups and --moe-router-group-topk come together (group-limited routing needs both)');
  if (groups === 1) return;
  c.set('model.moe.routingGroups', groups, a.shown('moe-router-num-groups'));
  c.set('model.moe.groupsPerToken', topk, a.shown('moe-router-group-topk'));
}

/**
 * Combined 1F1B (--overlap-moe-expert-parallel-comm) as parallel.moeOverlap. With a pipeline Megatron runs it only
 * with a virtual pipeline (it asserts one): refused without.
 */
function importExpertOverlap(c: ImportCollector, a: MegatronArgs): void {
  if (!a.has('overlap-moe-expert-parallel-comm')) return;
  const virtual = ['num-layers-per-virtual-pipeline-stage', 'num-virtual-stages-per-pipeline-rank'].some((f) =>
    a.has(f),
  );
  if ((a.int('pipeline-model-parallel-size') ?? 1) > 1 && !virtual)
    refuse(
      '--overlap-moe-expert-parallel-comm with a pipeline and no virtual pipeline: ' +
        'Megatron asserts one (give --num-layers-per-virtual-pipeline-stage or --num-virtual-stages-per-pipeline-rank)',
    );
  c.set('parallel.moeOverlap', true, '--overlap-moe-expert-parallel-comm');
}
