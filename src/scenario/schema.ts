import { z } from 'zod';
import { GPU_ARCHITECTURES } from '../sim/hardware/architectures.js';
import { FRAMEWORK_NAMES } from '../sim/workload/framework.js';
import { expertParallelShape, modelExpertShape, trainingExpertShape } from './moeSchema.js';
import { commSchema, noiseSchema, simulationSchema } from './runSchema.js';
import { FP8_RECIPE_NAMES } from '../sim/workload/fp8.js';

import { ATTENTION_KERNEL_NAMES } from '../sim/workload/attentionKernels.js';
import {
  DEEPSPEED_PERSISTENCE_THRESHOLD_ELEMENTS,
  DEEPSPEED_PREFETCH_BUCKET_ELEMENTS,
} from '../sim/parallel/zero3Collectives.js';
import { CP_COMM_TYPES, type CpCommType } from '../sim/workload/ops.js';
import {
  MASTER_WEIGHTS_TYPES,
  MOMENT_TYPES,
  type MasterWeightsType,
  type MomentType,
} from '../sim/memory/optimizerState.js';

/**
 * The scenario file's shape (YAML or JSON). Field names here are the contract with users; every
 * problem found is reported with its path. Presets give defaults; inline fields override them.
 */

const positiveInt = z.number().int().positive();
// finite(): YAML's `.inf` is a number too, and no size or rate here may be infinite.
const positive = z.number().positive().finite();
const fraction = z.number().gt(0).lte(1);

/**
 * A hardware number within a plausible range: 0.01× the smallest to 100× the largest of today's parts, wide enough
 * for any real or planned machine, narrow enough that a typo (0, 1e-300, 1e300) is refused instead of making a part
 * free or the step time overflow. Today: up to 2,250 dense bf16 TFLOP/s (B200), 8,000 GB/s of HBM, 288 GiB, 900 GB/s
 * of NVLink, 800 Gb/s per NIC, a kernel launch of a few µs.
 */
const within = (min: number, max: number) => z.number().finite().min(min).max(max);
const latencyNs = within(0, 1e7);
const bandwidthGBps = within(0.01, 1e5);

const gpuInline = z
  .object({
    preset: z.string().describe('a GPU preset name (`clustersim presets` lists them)'),
    name: z.string(),
    architecture: z
      .enum(GPU_ARCHITECTURES)
      .describe(
        "the GPU's generation: without a preset, its kernel figures (GEMM ceilings, attention, " +
          "sustained clocks) start from that generation's reference preset, " +
          'and its collective library and Transformer Engine features follow it',
      ),
    peakTflops: z
      .object({
        fp32: within(0.01, 1e6),
        tf32: within(0.01, 1e6),
        fp16: within(0.01, 1e6),
        bf16: within(0.01, 1e6),
        fp8: within(0.01, 1e6),
      })
      .partial()
      .strict(),
    gemmCeiling: z
      .object({ fp32: fraction, tf32: fraction, fp16: fraction, bf16: fraction, fp8: fraction })
      .partial()
      .strict(),
    sustainedGemmFraction: fraction,
    memoryGiB: within(0.1, 1e5),
    hbmBandwidthGBps: bandwidthGBps,
    hbmEfficiency: fraction,
    smCount: positiveInt.max(100_000),
    computeCapability: z.number().gte(1).lt(100),
    nvlinkBandwidthGBps: within(0, 1e5),
    pcieGen: z.union([z.literal(3), z.literal(4), z.literal(5)]),
    kernelLaunchNs: latencyNs,
  })
  .partial()
  .strict();

const nodeInline = z
  .object({
    preset: z.string().describe('a node preset name (`clustersim presets` lists them)'),
    gpusPerNode: positiveInt.max(4096),
    intra: z.enum(['nvswitch', 'nvlink-mesh', 'pcie']),
    nvlinkMesh: z
      .union([
        z.literal('full'),
        z.array(z.object({ a: z.number().int().min(0), b: z.number().int().min(0), links: positiveInt }).strict()),
      ])
      .describe(
        'with intra: nvlink-mesh, the GPU pairs joined directly and their link counts ([{ a: 0, b: 1, links: ' +
          '2 }, ...]), or `full`: one link between every pair (an Infinity Fabric mesh)',
      ),
    nvlinkBandwidthGBps: within(0, 1e5),
    nvlinkLatencyNs: latencyNs,
    nvls: z.boolean(),
    nvlsEfficiency: fraction.describe(
      'the all-reduce algorithm bandwidth NVLink SHARP reaches, ' +
        "as a fraction of nvlinkBandwidthGBps (default: the node preset's, else the H100's 0.75)",
    ),
    pcieBandwidthGBps: bandwidthGBps,
    pcieLatencyNs: latencyNs,
    gpusPerPcieSwitch: positiveInt,
    interSocketBandwidthGBps: bandwidthGBps,
    nicsPerNode: positiveInt.max(1024),
    hostAdamParamsPerS: within(1e3, 1e15).describe(
      "the whole node's CPU-Adam rate for optimizer offload, parameters per second, shared by its GPUs' processes",
    ),
    hostMemoryGiB: within(0.1, 1e7).describe(
      'host (CPU) memory of the node, GiB: where optimizer offload keeps its state',
    ),
  })
  .partial()
  .strict();

const networkInline = z
  .object({
    preset: z.string().describe('a network preset name (`clustersim presets` lists them)'),
    fabric: z.enum(['infiniband', 'ethernet']),
    linkGbps: within(0.01, 1e6),
    linkEfficiency: fraction,
    linkLatencyNs: latencyNs,
    railOptimized: z.boolean(),
    oversubscription: within(1, 1000),
    nodesPerLeaf: positiveInt,
  })
  .partial()
  .strict();

export const clusterSchema = z
  .object({
    /** A node preset (`dgx-a100-80gb`); it brings its usual network unless `network` says otherwise. */
    preset: z.string().describe('a node preset name (`clustersim presets` lists them)').optional(),
    nodes: positiveInt.default(1),
    gpu: z
      .union([z.string(), gpuInline])
      .describe(`a GPU preset name or a mapping with fields ${Object.keys(gpuInline.shape).join(', ')}`)
      .optional(),
    node: nodeInline.optional(),
    network: z
      .union([z.string(), networkInline])
      .describe(`a network preset name or a mapping with fields ${Object.keys(networkInline.shape).join(', ')}`)
      .optional(),
  })
  .strict();

export const modelSchema = z
  .object({
    preset: z.string().describe('a model preset name (`clustersim presets` lists them)').optional(),
    /** Path to a Hugging Face config.json, relative to the scenario file. */
    hfConfig: z.string().describe('the path of a Hugging Face config.json, relative to the scenario file').optional(),
    name: z.string().optional(),
    arch: z.enum(['gpt', 'llama', 'bert', 'mlp']).optional(),
    layers: positiveInt.optional(),
    hidden: positiveInt.optional(),
    heads: positiveInt.optional(),
    kvHeads: positiveInt.optional(),
    /** Width of one attention head where it is not hidden / heads (Hugging Face head_dim, Megatron --kv-channels). */
    headDim: positiveInt.optional(),
    ffnHidden: positiveInt.optional(),
    seqLen: positiveInt.optional(),
    vocab: positiveInt.optional(),
    tiedEmbeddings: z.boolean().optional(),
    mlpSizes: z.array(positiveInt).min(2).optional(),
    ...modelExpertShape,
  })
  .strict();

export const trainingSchema = z
  .object({
    globalBatch: positiveInt,
    microBatch: positiveInt.default(1),
    /**
     * `fp8`: bf16 mixed precision with the transformer layers' linear GEMMs in FP8, as Transformer Engine runs them
     * under Megatron-Core (src/sim/workload/fp8.ts; how in `fp8`).
     */
    precision: z.enum(['bf16', 'fp16', 'fp32', 'tf32', 'fp8']).default('bf16'),
    /**
     * With `precision: fp8`: the scaling recipe (Megatron's --fp8-recipe: `delayed`, the default, `tensorwise`,
     * current scaling, or on Blackwell `mxfp8`, a scale per 32 values) and `paramGather` (--fp8-param-gather: FP8
     * weights as the only weight copy, gathered in FP8 by the distributed optimizer). Only with precision fp8.
     */
    ...trainingExpertShape,
    fp8: z
      .object({
        recipe: z.enum(FP8_RECIPE_NAMES).default('delayed'),
        paramGather: z.boolean().default(false),
      })
      .strict()
      .optional(),
    optimizer: z.enum(['adam', 'sgd']).default('adam'),
    /**
     * The types the optimizer keeps its state in (src/sim/memory/optimizerState.ts): Megatron's
     * --use-precision-aware-optimizer (--main-params-dtype, --exp-avg-dtype, --exp-avg-sq-dtype), Apex/NeMo
     * distributed_fused_adam's `dtype`. Default: all fp32.
     */
    optimizerState: z
      .object({
        masterWeights: z.enum(MASTER_WEIGHTS_TYPES as [MasterWeightsType, ...MasterWeightsType[]]).default('fp32'),
        momentum: z.enum(MOMENT_TYPES as [MomentType, ...MomentType[]]).default('fp32'),
        variance: z.enum(MOMENT_TYPES as [MomentType, ...MomentType[]]).default('fp32'),
      })
      .strict()
      .default({}),
    flashAttention: z.boolean().default(true),
    /**
     * How element-wise work runs: `fused` one kernel per norm, rotary embedding and activation (torch.compile,
     * Megatron's or Transformer Engine's fused kernels); `eager` Llama's as eager PyTorch issues them (Hugging Face
     * modeling_llama.py: RMSNorm in fp32 passes, rotate-half rotary embedding, SiLU then multiply).
     */
    kernels: z.enum(['fused', 'eager']).default('fused'),
    /**
     * The fused attention kernel when `flashAttention` (src/sim/workload/attentionKernels.ts): `auto`
     * FlashAttention-2 (what PyTorch's scaled_dot_product_attention runs up to 2.10), `fa3` FlashAttention-3 (Hopper),
     * `cudnn` cuDNN's fused attention (what Transformer Engine and Megatron-Core run on Hopper, and SDPA there from
     * 2.11), `triton` FlashAttention written in Triton (MPT's `attn_impl: triton`, llm-foundry up to 0.4;
     * tritonFlashAttention.ts), `mem-efficient` xFormers' memory-efficient kernel (what SDPA runs below Ampere, where
     * `auto` means it).
     */
    attentionKernel: z.enum(ATTENTION_KERNEL_NAMES).default('auto'),
    /**
     * The training framework whose host-side costs and kernel sequence are modelled
     * (src/sim/workload/framework.ts). `none`: framework-agnostic GPU model, launch overhead folded into
     * each kernel. `megatron-deepspeed`: Megatron-DeepSpeed on PyTorch eager (host issue model).
     */
    framework: z.enum(FRAMEWORK_NAMES).default('none'),
    /**
     * Host time to issue one framework call on the training host, µs, in place of the framework's cited
     * figure (16.1 µs); measure it with `python3 scripts/measure-host-op.py` on that host. Needs a framework.
     */
    hostOpUs: z.number().positive().max(10_000).optional(),
    /**
     * Host time of one `torch.distributed` collective call, µs (default 89, pytorch/pytorch#138773); the same script
     * measures it.
     */
    hostCollectiveUs: z.number().positive().max(100_000).optional(),
    /**
     * The framework pads the vocabulary to a multiple of this × tp, as Megatron's `--make-vocab-size-divisible-by`
     * does (default 128 with `framework: megatron-deepspeed`, 1, no padding, otherwise). An unpadded vocabulary
     * off the tensor-core alignment makes the LM head's GEMMs slow (kernelTime.ts).
     */
    vocabDivisibleBy: positiveInt.optional(),
    /** Overrides the model's sequence length. */
    seqLen: positiveInt.optional(),
  })
  .strict();

export const parallelSchema = z
  .object({
    /** Tensor-parallel size (Megatron); heads, KV heads and FFN are split over it. */
    tp: positiveInt.default(1),
    /** Pipeline-parallel size (stages). */
    pp: positiveInt.default(1),
    /**
     * Context-parallel size (Megatron --context-parallel-size): each sequence is split over cp ranks, which exchange
     * what attention needs as `cpCommType` says; gradients are reduced over dp × cp.
     */
    cp: positiveInt.default(1),
    /**
     * How the context-parallel ranks exchange what attention needs (Megatron --cp-comm-type): `p2p` ring attention
     * (default), `all_gather` of the keys and values, or `a2a` all-to-all of queries, keys, values and output.
     * Accepted and ignored when cp is 1.
     */
    cpCommType: z.enum(CP_COMM_TYPES as [CpCommType, ...CpCommType[]]).default('p2p'),
    ...expertParallelShape,
    /** Data-parallel size; defaults to GPUs / (tp × cp × pp). */
    dp: positiveInt.optional(),
    schedule: z.enum(['gpipe', '1f1b', 'interleaved']).default('1f1b'),
    virtualStages: positiveInt.default(1),
    sequenceParallel: z.boolean().default(false),
    /**
     * Transformer Engine's TP communication overlap (Megatron --tp-comm-overlap, NeMo ub_tp_comm_overlap): the
     * all-gathers and reduce-scatters of sequence parallelism run while their GEMMs compute. Needs sequenceParallel.
     */
    tpCommOverlap: z.boolean().default(false),
    /** SMs its communication takes beside the GEMMs (TE's defaults: 16 each; NeMo recipes set their own). */
    tpCommOverlapSms: z
      .object({
        proj: z.number().int().nonnegative().default(16),
        fc2: z.number().int().nonnegative().default(16),
        bulk: z.number().int().nonnegative().default(16),
      })
      .strict()
      .default({}),
    tpStyle: z.enum(['megatron', 'allgather']).default('megatron'),
    recompute: z.enum(['none', 'selective', 'full']).default('none'),
    zero: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]).default(0),
    offload: z.enum(['none', 'cpu']).default('none'),
    /**
     * With 16-bit training, gradients accumulated and reduced in fp32: Megatron's main_grad buffers
     * (--accumulate-allreduce-grads-in-fp32, on by default with --bf16). 4 bytes per parameter of gradient memory
     * and of data-parallel gradient traffic instead of 2.
     */
    fp32Gradients: z.boolean().default(false),
    /**
     * With 16-bit training, gradients kept in 16 bits but reduced in fp32: DeepSpeed's communication_data_type fp32
     * converts each bucket to fp32 for its collective and back (stage_1_and_2.py gradient_reduction_w_predivide,
     * engine.py allreduce_bucket). 4 bytes per element of data-parallel gradient traffic, 2 of gradient memory, and
     * each bucket in flight has its fp32 copy beside it.
     */
    fp32Reduction: z.boolean().default(false),
    /**
     * With Megatron's distributed optimizer (zero 1): the all-gather of the updated weights runs at the start of the
     * next step under its forward, bucket by bucket, instead of after the optimizer (Megatron --overlap-param-gather,
     * NeMo overlap_param_sync / overlap_param_gather).
     */
    overlapParamGather: z.boolean().default(false),
    /** Rank order over the grid, fastest first (Megatron: tp, then dp, then pp). */
    placement: z.enum(['tp-dp-pp', 'tp-pp-dp']).default('tp-dp-pp'),
    layersPerStage: z.array(positiveInt).min(1).optional(),
    /**
     * The even pipeline split counts the embedding as one layer (Megatron --account-for-embedding-in-pipeline-split):
     * the first model chunk of the first stage holds one transformer layer fewer. Not with layersPerStage.
     */
    accountForEmbeddingInSplit: z.boolean().default(false),
    /** Likewise for the output layer and loss on the last model chunk (--account-for-loss-in-pipeline-split). */
    accountForLossInSplit: z.boolean().default(false),
    zeroConfig: z
      .object({
        reduceBucketMB: positive.default(500),
        overlapComm: z.boolean().default(true),
        /**
         * Whose ZeRO-1 `zero: 1` is: `deepspeed` (DeepSpeed's stage 1: gradients reduced in buckets of
         * reduceBucketMB) or `megatron` (Megatron's distributed optimizer: the ddp buckets). Absent: `deepspeed` with
         * `training.framework: megatron-deepspeed`, else `megatron`. The imports set it.
         */
        stage1: z.enum(['deepspeed', 'megatron']).optional(),
        stage3: z.enum(['deepspeed', 'fsdp']).optional(),
        /**
         * DeepSpeed ZeRO-3's `stage3_prefetch_bucket_size`: it gathers parameters in groups of at least this many
         * elements, a larger parameter on its own (src/sim/parallel/zero3Collectives.ts); 0, DeepSpeed's "no prefetch",
         * gathers each parameter on its own. Default DeepSpeed's 5e7.
         */
        prefetchBucketElements: z.number().nonnegative().finite().default(DEEPSPEED_PREFETCH_BUCKET_ELEMENTS),
        /**
         * DeepSpeed ZeRO-3's `stage3_param_persistence_threshold`: parameters of fewer elements are kept whole and
         * never gathered. Default DeepSpeed's 1e5. FSDP's ZeRO-3 uses neither: it gathers a wrapped block at a time.
         */
        persistenceThresholdElements: z
          .number()
          .nonnegative()
          .finite()
          .default(DEEPSPEED_PERSISTENCE_THRESHOLD_ELEMENTS),
      })
      .strict()
      .default({}),
    ddp: z
      .object({
        bucketMB: positive.default(25),
        firstBucketMB: positive.default(1),
        overlap: z.boolean().default(true),
      })
      .strict()
      .default({}),
  })
  .strict()
  .default({});

export const scenarioSchema = z
  .object({
    name: z.string().optional(),
    description: z.string().optional(),
    seed: z.number().int().nonnegative().default(1),
    cluster: clusterSchema,
    // A preset's name alone, as cluster.node.gpu and cluster.network take it: `model: llama2-7b`.
    model: z.preprocess((v) => (typeof v === 'string' ? { preset: v } : v), modelSchema),
    training: trainingSchema,
    parallel: parallelSchema,
    comm: commSchema,
    noise: noiseSchema,
    simulation: simulationSchema,
  })
  .strict();

/** A scenario as written, after defaults. */
export type ScenarioInput = z.infer<typeof scenarioSchema>;
