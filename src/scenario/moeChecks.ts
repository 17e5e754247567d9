import { ScenarioError } from '../sim/errors.js';
import type { ModelSpec } from '../sim/workload/model.js';
import type { MoeSpec } from '../sim/workload/moe.js';
import type { Problem } from './errors.js';
import type { ScenarioInput } from './schema.js';

type MoeInput = NonNullable<ScenarioInput['model']['moe']>;

/**
 * The model's experts: the fields given laid over the base model's (a preset's, a Hugging Face config's), or, for a
 * model of its own, the fields given with the defaults (no shared experts, no dense layers, experts as wide as the
 * dense MLP, `ffnHidden`, as Megatron's --moe-ffn-hidden-size defaults to --ffn-hidden-size).
 * @throws ScenarioError naming the first required field missing
 */
export function resolveMoe(
  input: MoeInput | undefined,
  base: MoeSpec | undefined,
  ffnHidden: number,
): MoeSpec | undefined {
  if (input === undefined) return base;
  const merged = {
    sharedExpertFfnHidden: 0,
    denseLayers: 0,
    expertFfnHidden: ffnHidden,
    ...base,
    ...definedFields(input),
  };
  for (const k of ['experts', 'topK'] as const) {
    if (merged[k] === undefined)
      throw new ScenarioError(`model.moe.${k}`, 'is required for a model with experts; expected a positive integer');
  }
  return merged as MoeSpec;
}

function definedFields(input: MoeInput): Partial<MoeSpec> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<MoeSpec>;
}

/** Frameworks whose MoE layers the step compiler follows: the framework-agnostic ops, laid out as Megatron-Core's. */
const MOE_FRAMEWORKS = new Set(['none']);

/**
 * What the simulator cannot model of a model with experts, or of expert parallelism without one: each as a problem,
 * so that nothing runs as something else.
 */
export function moeProblems(model: ModelSpec, input: ScenarioInput, dp: number): Problem[] {
  return [...mlaProblems(model, input), ...mtpProblems(model, input), ...expertProblems(model, input, dp)];
}

/** What is not modelled of multi-token prediction: another architecture, tensor or context parallelism, FP8, ZeRO-3. */
function mtpProblems(model: ModelSpec, input: ScenarioInput): Problem[] {
  if (!model.mtpLayers) return [];
  const at = (path: string, message: string): Problem => ({ path, message });
  const par = input.parallel;
  return [
    ...(model.arch !== 'llama'
      ? [at('model.mtpLayers', `multi-token prediction is modelled for llama models; this model is ${model.arch}`)]
      : []),
    ...(par.tp > 1
      ? [at('parallel.tp', `${par.tp}: multi-token prediction (model.mtpLayers) is modelled at tp 1 only`)]
      : []),
    ...(par.cp > 1
      ? [at('parallel.cp', `${par.cp}: multi-token prediction (model.mtpLayers) is modelled at cp 1 only`)]
      : []),
    ...(input.training.precision === 'fp8'
      ? [at('training.precision', 'FP8 training with multi-token prediction (model.mtpLayers) is not modelled')]
      : []),
    // The module's lookup and head pass reuse the embedding and the head, which ZeRO-3 would gather once more.
    ...(par.zero === 3
      ? [
          at(
            'parallel.zero',
            'ZeRO-3 / FSDP with multi-token prediction (model.mtpLayers) is not modelled; use 0, 1 or 2',
          ),
        ]
      : []),
  ];
}

/** What is not modelled of latent attention: another architecture, context parallelism, FP8 or another TP style. */
function mlaProblems(model: ModelSpec, input: ScenarioInput): Problem[] {
  if (!model.mla) return [];
  const out: Problem[] = [];
  if (model.arch !== 'llama')
    out.push({ path: 'model.mla', message: `is modelled for llama models; this model is ${model.arch}` });
  if (input.parallel.cp > 1)
    out.push({
      path: 'parallel.cp',
      message: `${input.parallel.cp}: latent attention (model.mla) is modelled at cp 1 only`,
    });
  if (input.parallel.tpStyle === 'allgather' || input.training.precision === 'fp8')
    out.push({ path: 'model.mla', message: 'latent attention is modelled in 16-bit Megatron-style training only' });
  return out;
}

function expertProblems(model: ModelSpec, input: ScenarioInput, dp: number): Problem[] {
  const { parallel: par, training } = input;
  const ep = par.ep ?? 1;
  const moe = model.moe;
  if (!moe) {
    const problems: Problem[] = [];
    if (ep > 1)
      problems.push({
        path: 'parallel.ep',
        message: `${ep}: expert parallelism needs a model with experts (model.moe); use 1`,
      });
    if (par.etp !== undefined && par.etp !== par.tp)
      problems.push({
        path: 'parallel.etp',
        message: `${par.etp}: an expert tensor parallelism needs a model with experts (model.moe); leave it out`,
      });
    if (training.routing)
      problems.push({
        path: 'training.routing',
        message: 'routing needs a model with experts (model.moe); leave it out',
      });
    return problems;
  }
  const problems: Problem[] = [];
  const at = (path: string, message: string) => problems.push({ path, message });
  const routing = training.routing;
  if (routing?.tokensPerExpert && routing.tokensPerExpert.length !== moe.experts)
    at(
      'training.routing.tokensPerExpert',
      `has ${routing.tokensPerExpert.length} counts; the model has ${moe.experts} experts, one count each`,
    );
  if (routing?.tokensPerExpert && routing.tokensPerExpert.every((n) => n === 0))
    at('training.routing.tokensPerExpert', 'counts no token at all; give each expert the tokens it received');
  if (routing?.padToCapacity && routing.capacityFactor === undefined)
    at('training.routing.padToCapacity', 'pads to a capacity: give training.routing.capacityFactor too');
  if (model.arch !== 'llama')
    at('model.moe', `experts are modelled for llama models (SwiGLU experts); this model is ${model.arch}`);
  if (moe.topK > moe.experts) at('model.moe.topK', `${moe.topK} exceeds the ${moe.experts} experts`);
  if (moe.denseLayers >= model.layers)
    at('model.moe.denseLayers', `${moe.denseLayers} leaves none of the ${model.layers} layers with experts`);
  if (moe.experts % ep !== 0) at('parallel.ep', `${ep} does not divide the ${moe.experts} experts`);
  const etp = par.etp ?? par.tp;
  const reducing = dp * par.cp;
  if (etp === par.tp && reducing % ep !== 0)
    at(
      'parallel.ep',
      `${ep} does not divide dp × cp = ${reducing}: the experts keep the attention's tp, ` +
        'so expert-parallel groups are formed from data-parallel (and context-parallel) ranks',
    );
  if (etp !== par.tp && (par.tp * reducing) % (etp * ep) !== 0)
    at(
      'parallel.etp',
      `etp × ep = ${etp} × ${ep} does not divide tp × dp × cp = ${par.tp * reducing}, ` +
        'the ranks of a stage the experts fold over',
    );
  // parallel_state.initialize_model_parallel: "When not using pp-last rank ordering, the data parallel size of the
  // attention and moe layers must be the same" (--use-tp-pp-dp-mapping with pp > 1 needs etp × ep = tp × cp).
  if (!expertPlacementFits(par.placement, par.pp, etp * ep, par.tp * par.cp))
    at(
      'parallel.placement',
      "tp-pp-dp with pp > 1 needs the experts' data-parallel size to equal dp, " +
        `etp × ep = tp × cp = ${par.tp * par.cp}; Megatron-Core refuses ${etp} × ${ep}`,
    );
  if (moe.sharedExpertFfnHidden % par.tp !== 0)
    at('parallel.tp', `${par.tp} does not divide the shared experts' width (${moe.sharedExpertFfnHidden})`);
  if (par.zero === 2) at('parallel.zero', 'Megatron-Core has no ZeRO-2 for a model with experts; use zero 0 or 1');
  if (moe.expertFfnHidden % etp !== 0)
    at(
      etp === par.tp ? 'parallel.tp' : 'parallel.etp',
      `${etp} does not divide the expert width (${moe.expertFfnHidden})`,
    );
  if (par.tp > 1 && !par.sequenceParallel)
    at('parallel.sequenceParallel', 'Megatron-Core needs sequence parallelism for experts with tp > 1; set it true');
  if ((ep > 1 || etp !== par.tp) && (input.simulation.fidelity === 'full' || input.noise.computeJitter > 0))
    at(
      input.noise.computeJitter > 0 ? 'noise.computeJitter' : 'simulation.fidelity',
      'expert parallelism is simulated in symmetric fidelity, one replica for all (full fidelity and compute jitter, ' +
        'which need every replica, are not modelled with ep > 1 or an etp of its own)',
    );
  if (par.zero === 3) at('parallel.zero', 'ZeRO-3 / FSDP of a model with experts is not modelled; use zero 0, 1 or 2');
  if (par.tpStyle === 'allgather')
    at('parallel.tpStyle', "experts are modelled with Megatron's tensor parallelism only");
  if (training.precision === 'fp8') at('training.precision', 'FP8 training of a model with experts is not modelled');
  if (!MOE_FRAMEWORKS.has(training.framework))
    at(
      'training.framework',
      `${training.framework}: experts are modelled as Megatron-Core runs them, ` +
        "not with this framework's host costs; use none",
    );
  return problems;
}

/**
 * Whether Megatron-Core lays the experts out under this placement: with the pipeline outermost (tp-dp-pp), or no
 * pipeline, any expert grid; with tp-pp-dp and a pipeline only one whose data-parallel size is the attention's
 * (etp × ep = tp × cp). The planner asks it too.
 */
export function expertPlacementFits(placement: string, pp: number, etpTimesEp: number, tpTimesCp: number): boolean {
  return placement !== 'tp-pp-dp' || pp === 1 || etpTimesEp === tpTimesCp;
}
