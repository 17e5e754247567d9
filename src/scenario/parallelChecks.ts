import type { NodeSpec } from '../sim/hardware/types.js';
import { traitsOf } from '../sim/hardware/architectures.js';
import { kvHeadsPerRank, pipelineLayerCount, type ModelSpec } from '../sim/workload/model.js';
import type { CpCommType } from '../sim/workload/ops.js';
import { evenSplitProblem, layersPerStageProblem, type SplitSlots } from '../sim/parallel/layout.js';
import { isReducedOptimizerState } from '../sim/memory/optimizerState.js';
import type { ScenarioInput } from './schema.js';
import type { Problem } from './errors.js';
import { MAX_GPUS } from './simulationLimits.js';

/** Checks that tp × cp × pp × dp uses the cluster and that the split suits the model and the frameworks. */
export function checkParallel(
  par: ScenarioInput['parallel'],
  dp: number,
  gpus: number,
  nodes: number,
  perNode: number,
  model: ModelSpec,
  training: ScenarioInput['training'],
): Problem[] {
  const problems: Problem[] = [];
  const cp = par.cp;
  // cp is named only when it is used, so that the messages of scenarios without it stay as they were.
  const names = cp > 1 ? 'tp × cp × pp' : 'tp × pp';
  const values = cp > 1 ? `${par.tp} × ${cp} × ${par.pp}` : `${par.tp} × ${par.pp}`;
  const used = par.tp * cp * par.pp * dp;
  // A cluster past the simulator's limit is reported as such (simulationLimits.ts); a dp to match it would not help.
  if (used !== gpus && gpus <= MAX_GPUS) {
    const split = par.tp * cp * par.pp;
    // A split larger than the cluster cannot be fixed by dp: say it is too big, not that it does not divide.
    const given =
      par.dp === undefined
        ? split > gpus
          ? `${names} = ${values} = ${split} exceeds`
          : `${names} = ${values} does not divide`
        : `${names} × dp = ${values} × ${dp} = ${used} ${used > gpus ? 'exceeds' : 'does not match'}`;
    const fix = par.dp !== undefined && gpus % split === 0 ? `; set dp to ${gpus / split} or leave it out` : '';
    problems.push({
      path: par.dp === undefined ? 'parallel' : 'parallel.dp',
      message:
        `${given} the cluster's ${gpus} ${gpus === 1 ? 'GPU' : 'GPUs'} ` +
        `(${nodes} ${nodes === 1 ? 'node' : 'nodes'} × ${perNode})${fix}`,
    });
  }
  if (cp > 1) problems.push(...contextParallelProblems(cp, model, training, par.zero, par.tp, par.cpCommType));
  if (model.arch !== 'mlp' && model.heads % par.tp !== 0)
    problems.push({ path: 'parallel.tp', message: `${par.tp} does not divide heads (${model.heads})` });
  if (model.arch !== 'mlp' && model.ffnHidden % par.tp !== 0)
    problems.push({ path: 'parallel.tp', message: `${par.tp} does not divide the FFN width (${model.ffnHidden})` });
  if (par.pp > 1 && par.schedule === 'interleaved' && par.virtualStages < 2)
    problems.push({ path: 'parallel.virtualStages', message: 'the interleaved schedule needs virtualStages ≥ 2' });
  const slots = { embedding: par.accountForEmbeddingInSplit, loss: par.accountForLossInSplit };
  if (slots.embedding || slots.loss) problems.push(...splitSlotProblems(model, par, slots));
  else if (
    par.pp > 1 &&
    !par.layersPerStage &&
    model.layers % (par.pp * (par.schedule === 'interleaved' ? par.virtualStages : 1)) !== 0
  ) {
    const chunks = par.pp * (par.schedule === 'interleaved' ? par.virtualStages : 1);
    // With pp dividing the layers it is the chunks per stage that do not: say so, rather than to change pp.
    const byChunks = chunks > par.pp && model.layers % par.pp === 0;
    problems.push({
      path: byChunks ? 'parallel.virtualStages' : 'parallel.pp',
      message:
        `${model.layers} layers do not split evenly over ${chunks} model chunks (pp × virtualStages); ` +
        'give parallel.layersPerStage or change ' +
        `${byChunks ? `virtualStages (to one dividing the ${model.layers / par.pp} layers per stage)` : 'pp'}`,
    });
  }
  if (par.layersPerStage) {
    const v = par.pp > 1 && par.schedule === 'interleaved' ? par.virtualStages : 1;
    const problem = layersPerStageProblem(pipelineLayerCount(model), par.pp, v, par.layersPerStage);
    if (problem) problems.push({ path: 'parallel.layersPerStage', message: problem });
  }
  if (par.pp > model.layers)
    problems.push({ path: 'parallel.pp', message: `${par.pp} stages is more than the model's ${model.layers} layers` });
  if (par.zero >= 2 && par.pp > 1)
    problems.push({
      path: 'parallel.zero',
      message:
        `ZeRO-${par.zero} cannot be combined with pipeline parallelism ` +
        '(DeepSpeed supports pipelines with ZeRO-1 only); use zero 0 or 1, or pp 1',
    });
  if (par.offload === 'cpu' && par.zero === 0)
    problems.push({
      path: 'parallel.offload',
      message: 'CPU offload of the optimizer needs ZeRO (zero ≥ 1), as in DeepSpeed',
    });
  if (par.sequenceParallel && (par.tp === 1 || par.tpStyle !== 'megatron'))
    problems.push({
      path: 'parallel.sequenceParallel',
      message:
        par.tp === 1
          ? 'needs tp > 1'
          : "turns Megatron's TP all-reduces into reduce-scatters and all-gathers (Korthikanti et al. 2022, §4.2.2); " +
            `tpStyle ${par.tpStyle} gathers every linear's output and has no such split, so norms and activations ` +
            'would shrink by tp with no communication; use tpStyle megatron, or sequenceParallel false',
    });
  return problems;
}

/**
 * What stops Transformer Engine's TP communication overlap: it overlaps sequence parallelism's collectives
 * (Megatron asserts it).
 */
export function tpCommOverlapProblems(
  par: ScenarioInput['parallel'],
  node: NodeSpec,
  framework: string,
  model: ModelSpec,
): Problem[] {
  if (model.arch === 'mlp')
    return [
      {
        path: 'parallel.tpCommOverlap',
        message:
          "overlaps a transformer layer's sequence-parallel collectives; an mlp model has none; " +
          'leave tpCommOverlap off',
      },
    ];
  if (framework !== 'none')
    return [
      {
        path: 'parallel.tpCommOverlap',
        message:
          "is Transformer Engine's (Megatron-LM, NeMo); " +
          `training.framework ${framework} runs Megatron's own linear layers without it; leave tpCommOverlap off`,
      },
    ];
  const traits = traitsOf(node.gpu);
  if (!traits.tpCommOverlap) {
    const why = traits.vendor === 'amd' ? ": ROCm's Transformer Engine has no userbuffers" : '';
    return [
      {
        path: 'parallel.tpCommOverlap',
        message:
          `is Transformer Engine's userbuffers overlap, which does not run on ${node.gpu.name} ` +
          `(${traits.label}${why}); leave tpCommOverlap off`,
      },
    ];
  }
  // Userbuffers map the TP group's buffers into each other over NVLink: the group must be inside one NVLink node.
  if (par.tp > node.gpusPerNode || node.gpusPerNode % par.tp !== 0 || !(node.nvlinkBandwidthGBps > 0)) {
    return [
      {
        path: 'parallel.tpCommOverlap',
        message:
          `needs the TP group inside one NVLink node (Transformer Engine's userbuffers), and tp ${par.tp} on ` +
          `${node.name} (${node.gpusPerNode} GPUs per node${node.nvlinkBandwidthGBps > 0 ? '' : ', no NVLink'}) ` +
          'is not; leave tpCommOverlap off',
      },
    ];
  }
  if (!par.sequenceParallel)
    return [
      {
        path: 'parallel.tpCommOverlap',
        message:
          'overlaps the all-gathers and reduce-scatters of sequence parallelism, as Megatron requires; ' +
          'set parallel.sequenceParallel: true (with tp > 1) or leave tpCommOverlap off',
      },
    ];
  if (par.tpStyle !== 'megatron')
    return [
      {
        path: 'parallel.tpCommOverlap',
        message: `is Transformer Engine's overlap of Megatron's linear layers; tpStyle ${par.tpStyle} has none`,
      },
    ];
  return [];
}

/**
 * What stops context parallelism over `cp` ranks, as Megatron runs it on Transformer Engine: the sequence is cut into
 * 2·cp chunks so that causal work balances (rank i holds chunks i and 2·cp − 1 − i), the attention is the fused
 * kernel's, and the all-to-all type (`a2a`) gives each rank 1/cp of its TP rank's query and key/value heads.
 */
function contextParallelProblems(
  cp: number,
  model: ModelSpec,
  training: ScenarioInput['training'],
  zero: number,
  tp: number,
  commType: CpCommType,
): Problem[] {
  const problems: Problem[] = [];
  if (model.arch === 'mlp')
    return [
      { path: 'parallel.cp', message: 'context parallelism splits sequences, and an mlp model has none; use cp 1' },
    ];
  const seqLen = training.seqLen ?? model.seqLen;
  if (seqLen % (2 * cp) !== 0) {
    problems.push({
      path: 'parallel.cp',
      message:
        `the sequence (${seqLen} tokens) must split into 2 × cp = ${2 * cp} equal chunks ` +
        '(Megatron cuts every sequence so, get_batch_on_this_cp_rank); ' +
        `use a cp for which 2 × cp divides ${seqLen}, or change training.seqLen`,
    });
  }
  if (!training.flashAttention)
    problems.push({
      path: 'parallel.cp',
      message:
        'context parallelism runs on fused attention (Transformer Engine); ' +
        'set training.flashAttention: true or use cp 1',
    });
  if (training.framework !== 'none')
    problems.push({
      path: 'parallel.cp',
      message:
        `training.framework ${training.framework} has no context parallelism ` +
        "(DeepSpeed's sequence parallelism is Ulysses, not modelled); use cp 1 or framework none",
    });
  if (zero === 3)
    problems.push({
      path: 'parallel.cp',
      message: 'ZeRO-3 (DeepSpeed) cannot be combined with Megatron context parallelism; use zero 0–2 or cp 1',
    });
  if (commType === 'a2a' && model.heads % tp === 0) {
    // Transformer Engine's all-to-all gives each rank 1/cp of the query and of the key/value heads of its TP rank.
    const q = model.heads / tp;
    const kv = kvHeadsPerRank(model, tp);
    if (q % cp !== 0 || kv % cp !== 0) {
      const usable = [...Array(Math.min(q, kv)).keys()]
        .map((i) => i + 1)
        .filter((c) => c > 1 && q % c === 0 && kv % c === 0);
      problems.push({
        path: 'parallel.cpCommType',
        message:
          `a2a splits each TP rank's heads over the cp ranks, but ${q} query head(s) and ${kv} key/value head(s) ` +
          `per TP rank do not divide by cp ${cp}; ${usable.length > 0 ? `use cp ${usable.join(' or ')}, ` : ''}use ` +
          'cpCommType p2p or all_gather, or a smaller tp',
      });
    }
  }
  return problems;
}

/** State types the precision, the optimizer or CPU offload has no place for. */
export function optimizerStateProblems(t: ScenarioInput['training'], offload: string): Problem[] {
  const state = t.optimizerState;
  const problems: Problem[] = [];
  const mixed = t.precision === 'bf16' || t.precision === 'fp16' || t.precision === 'fp8';
  if (!mixed && state.masterWeights !== 'fp32') {
    problems.push({
      path: 'training.optimizerState.masterWeights',
      message:
        `${state.masterWeights}: training.precision ${t.precision} keeps no master copy ` +
        '(its weights are the fp32 values); leave masterWeights out, or train in bf16/fp16',
    });
  } else if (state.masterWeights === 'remainders' && t.precision !== 'bf16') {
    problems.push({
      path: 'training.optimizerState.masterWeights',
      message:
        'remainders keeps the 16 bits of fp32 that a bf16 weight lacks, ' +
        `so it needs training.precision bf16 (not ${t.precision}); use fp32 or fp16`,
    });
  }
  if (t.optimizer === 'sgd' && state.variance !== 'fp32') {
    problems.push({
      path: 'training.optimizerState.variance',
      message: `${state.variance}: training.optimizer sgd keeps no variance (only adam does); leave variance out`,
    });
  }
  if (offload === 'cpu' && isReducedOptimizerState(state)) {
    problems.push({
      path: 'training.optimizerState',
      message:
        "with parallel.offload cpu the host Adam keeps its state in fp32 (DeepSpeed's CPU-Adam), " +
        'which is what is simulated; leave optimizerState out, or set parallel.offload none',
    });
  }
  return problems;
}

/** Problems of an even split that counts the embedding or the loss as a layer (`accountFor…InSplit`). */
function splitSlotProblems(model: ModelSpec, par: ScenarioInput['parallel'], slots: SplitSlots): Problem[] {
  const path = slots.embedding ? 'parallel.accountForEmbeddingInSplit' : 'parallel.accountForLossInSplit';
  if (model.arch === 'mlp') return [{ path, message: 'an MLP has no embedding or loss layer to count; drop it' }];
  if (par.layersPerStage)
    return [
      {
        path,
        message:
          'changes the even split only, and parallel.layersPerStage gives the split itself; give one or the other',
      },
    ];
  const v = par.pp > 1 && par.schedule === 'interleaved' ? par.virtualStages : 1;
  const problem = evenSplitProblem(model.layers, par.pp, v, slots);
  return problem
    ? [
        {
          path: v > 1 ? 'parallel.virtualStages' : 'parallel.pp',
          message: `${problem}; change pp or virtualStages, or drop ${path}`,
        },
      ]
    : [];
}
