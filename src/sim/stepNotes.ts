import { moeNotes } from './moeNotes.js';
import { modelLeftOutNote } from './workload/leftOut.js';
import { ARCHITECTURE_TRAITS, GPU_ARCHITECTURES, traitsOf } from './hardware/architectures.js';
import type { StepSetup } from './setup.js';
import type { Fp8Recipe } from './workload/fp8.js';
import { expectedMaxStandardNormal, symmetricStageFactors } from './parallel/gpuSpeed.js';

/**
 * The remarks a step's result carries (`StepResult.notes`): what the simulation assumed where the scenario left it
 * open, and what it leaves out, so that the output never hides a stand-in.
 */
export function stepNotes(setup: StepSetup, mfu: number): string[] {
  return [
    ...modelLeftOutNotes(setup),
    ...kernelFigureNotes(setup),
    ...collectiveLibraryNotes(setup),
    ...fp8Notes(setup),
    ...moeNotes(setup),
    ...placementNotes(setup),
    ...(setup.cluster.node.gpu.calibratedCpu ? [] : mfuNotes(mfu, setup.training.kernels)),
  ];
}

/** What the model's source describes that the step leaves out (ModelSpec.notModelled). */
function modelLeftOutNotes(setup: StepSetup): string[] {
  const note = modelLeftOutNote(setup.model);
  return note ? [note] : [];
}

/** On AMD GPUs: what of RCCL is modelled, and what the output's "NVLink" stands for. */
function collectiveLibraryNotes(setup: StepSetup): string[] {
  const node = setup.cluster.node;
  const traits = traitsOf(node.gpu);
  if (traits.collectiveLibrary !== 'RCCL') return [];
  const mesh = node.intra === 'nvlink-mesh' ? ' over the Infinity Fabric mesh, all links of a GPU loaded alike' : '';
  return [
    `collectives on ${node.gpu.name} are timed as RCCL's rings${mesh}; ` +
      "RCCL's own choice of algorithm by size (its tuning tables, MSCCL's all-pairs all-reduce up to 16 MiB, " +
      'MSCCL++ below 1 MiB) is not modelled, NCCL\'s stands in; "NVLink" in this output means Infinity Fabric',
  ];
}

/** MFU above which a step's result says it is above what published training runs report. */
export const MFU_NOTE_ABOVE = 0.65;

/**
 * A remark on an MFU above what published runs reach: Megatron-LM's best on A100 is 52% of peak (Narayanan et al.
 * SC21, Table 1: 163 of 312 TFLOP/s at 1T parameters), PyTorch FSDP's up to 46% on H100 (mosaicml/llm-foundry's
 * benchmark tables, the validation set llm-foundry-fsdp).
 */
function mfuNotes(mfu: number, kernels: StepSetup['training']['kernels']): string[] {
  if (!(mfu > MFU_NOTE_ABOVE)) return [];
  const eager =
    kernels === 'eager'
      ? ''
      : '; the default fused element-wise kernels are a best case, --set training.kernels=eager models eager PyTorch';
  return [
    `MFU ${(100 * mfu).toFixed(1)}% is above what published training runs report (Megatron-LM up to 52% on A100, ` +
      `SC21 Table 1; PyTorch FSDP up to 46% on H100, llm-foundry's benchmarks): read it as a bound${eager}`,
  ];
}

/** A GPU of the scenario's own that runs on another's kernel figures: which, so that the output never hides it. */
function kernelFigureNotes(setup: StepSetup): string[] {
  const gpu = setup.cluster.node.gpu;
  if (!gpu.kernelFiguresOf) return [];
  const { gpu: base, figures, architecture } = gpu.kernelFiguresOf;
  const why = architecture
    ? `the reference ${ARCHITECTURE_TRAITS[architecture].label} GPU, as cluster.gpu.architecture names`
    : `the node preset's GPU; name its generation with cluster.gpu.architecture (${GPU_ARCHITECTURES.join(', ')}) ` +
      "to start from that one's";
  return [
    `GPU ${gpu.name} computes with ${base}'s kernel figures where the scenario gives none (${figures.join(', ')}; ` +
      `${why}): set the fields under cluster.gpu, or measure the GPU with clustersim calibrate and pass --profile`,
  ];
}

/** What FP8 training is taken to be, and what of it is left out (workload/fp8.ts). */
function fp8Notes(setup: StepSetup): string[] {
  const fp8 = setup.training.fp8;
  if (setup.training.precision !== 'fp8' || !fp8) return [];
  const recipe = FP8_RECIPE_WORDS[fp8.recipe];
  const label = traitsOf(setup.cluster.node.gpu).label;
  const copies =
    fp8.recipe === 'mxfp8'
      ? "Transformer Engine's row-wise and column-wise MXFP8 quantizations (no transposes, no amax reductions)"
      : `Transformer Engine's casts and transposes (as on Hopper${label === 'Hopper' ? '' : `; on ${label} too`})`;
  const amax =
    fp8.recipe === 'mxfp8'
      ? ''
      : ', and the small amax all-reduces of each ' +
        `micro-batch${fp8.recipe === 'tensorwise' ? ' and of sequence-parallel inputs' : ''}`;
  return [
    `fp8 (${recipe}${fp8.paramGather ? ', FP8 parameter gather' : ''}): the transformer layers' linear GEMMs run in ` +
      `FP8 with ${copies}; attention, embeddings, the LM head and the rest in bf16; MFU is against the fp8 dense peak`,
    'fp8 leaves out: activation memory is counted in bf16 (Transformer Engine keeps FP8 copies of some GEMM inputs, ' +
      `so real use may be lower)${amax}`,
  ];
}

const FP8_RECIPE_WORDS: Record<Fp8Recipe, string> = {
  delayed: 'delayed scaling',
  tensorwise: 'current (tensorwise) scaling',
  mxfp8: 'MXFP8 block scaling, a scale per 32 values',
};

/** Remarks on placement: TP groups that leave the node, pipeline stages that share a node, etc. */
function placementNotes(setup: StepSetup): string[] {
  const notes: string[] = [];
  const par = setup.parallel;
  const perNode = setup.cluster.node.gpusPerNode;
  if (par.tp > perNode) {
    notes.push(
      `tp ${par.tp} exceeds the ${perNode} GPUs of a node: tensor-parallel collectives cross the NICs ` +
        `(${setup.cluster.network.linkGbps} Gb/s ${setup.cluster.network.fabric}) on the critical path`,
    );
  } else if (par.placement === 'tp-dp-pp' && perNode % par.tp !== 0) {
    notes.push(`tp ${par.tp} does not divide the ${perNode} GPUs of a node: some TP groups straddle two nodes`);
  }
  if (setup.cluster.node.intra === 'pcie' && par.tp > 1)
    notes.push(
      `tensor parallelism over PCIe (no NVLink in ${setup.cluster.node.name}): ` +
        'every layer waits for its all-reduces over PCIe',
    );
  const spread = setup.noise.gpuSpeedSpread ?? 0;
  if (spread > 0) {
    const world = par.tp * (par.cp ?? 1) * par.pp * par.dp;
    const pct = (f: number) => `${(100 * (f - 1)).toFixed(1)}%`;
    if (setup.fidelity === 'full')
      notes.push(
        `GPU speed spread ${(100 * spread).toFixed(1)}%: each GPU's compute is slowed by its own factor, ` +
          `drawn from seed ${setup.seed}`,
      );
    else if (par.pp === 1)
      notes.push(
        `GPU speed spread ${(100 * spread).toFixed(1)}%: every GPU computes at the expected slowest of the ${world}, ` +
          `${pct(1 + spread * expectedMaxStandardNormal(world))} slower than the model's figures`,
      );
    else {
      const f = symmetricStageFactors(setup, world);
      const slowest = f.indexOf(Math.max(...f));
      const others = f[slowest === 0 ? 1 : 0];
      notes.push(
        `GPU speed spread ${(100 * spread).toFixed(1)}%: every stage computes at the expected slowest of its ` +
          `${world / par.pp} GPUs (${pct(others)} slower), and stage ${slowest} holds the expected slowest of all ` +
          `${world} (${pct(f[slowest])} slower), drawn from seed ${setup.seed}; ` +
          'an upper estimate with a pipeline (full fidelity over several seeds gives the mean)',
      );
    }
  }
  return notes;
}
