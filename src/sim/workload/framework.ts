import type { ScheduleRules } from '../parallel/schedules.js';

/**
 * The training framework as the host CPU sees it. In PyTorch eager mode every op is issued by the host
 * (Python → dispatcher → autograd → cudaLaunchKernel) and the GPU runs it later; a kernel cannot start
 * before the host has issued it. When kernels are short the GPU waits for the host ("framework-bound",
 * Fernandez et al., "The Framework Tax", EMNLP 2023). Some framework code also makes the host wait for
 * the GPU (a blocking copy is a cudaStreamSynchronize), which stops the host from running ahead.
 *
 * A `FrameworkSpec` carries the per-op host cost and the framework's code-path facts that change the
 * kernels or the host/GPU overlap. Block builders use it to annotate ops (`Op.hostNs`, `Op.hostSync`)
 * and to emit the framework's real kernel sequence; the step compiler turns the annotations into host
 * tasks that gate the compute stream. Without a framework, ops carry no host cost and the kernel launch
 * overhead stays folded into each kernel's GPU time (the older, framework-agnostic model).
 */
export interface FrameworkSpec {
  name: string;
  /**
   * Host time to issue one eager op, ns: Python binding, dispatcher, autograd bookkeeping and the
   * CUDA launch. Backward autograd nodes and collective calls are charged the same per call.
   */
  hostOpNs: number;
  /**
   * Host time of one `torch.distributed` collective call (c10d → ProcessGroupNCCL: work object, CUDA
   * events and stream waits, NCCL enqueue), ns. Charged for every collective the framework issues from
   * Python, even on a group of one rank.
   */
  hostCollectiveNs: number;
  /**
   * Megatron-DeepSpeed's `ParallelTransformerLayer.forward` creates `moe_loss` and `mlp_bias` with
   * `torch.tensor(0.0, device=...)` before the MLP in every layer (since its MoE support, June 2022). A
   * Python scalar sent to a CUDA device goes through `tensor.to(device, non_blocking=False)`, i.e.
   * `memcpy_and_sync` = cudaMemcpyAsync + cudaStreamSynchronize (PyTorch `tensor_new.cpp`,
   * `Copy.cu`): the host waits for the GPU to drain once per layer forward, recompute included.
   */
  layerForwardSync: boolean;
  /**
   * Megatron's fused scale-mask-softmax is used only when `FusedScaleMaskSoftmax.is_kernel_available`
   * holds: fp16/bf16, 16 < sk ≤ this limit, sq and sk multiples of 4, and (causal) b·np a multiple of
   * batch_per_block (4 for sk > 128: 128 threads / 32-lane warps, one row per warp). Otherwise the
   * torch fallback runs: float(), ×scale, masked_fill_, softmax, half() — five fp32 passes.
   */
  fusedSoftmaxMaxSeq: number;
  /** Vocab-parallel cross-entropy on `logits.float()` (Megatron without `--fp16-lm-cross-entropy`). */
  fp32CrossEntropy: boolean;
  /**
   * Megatron overlaps the all-reduce of a column-parallel linear's input gradient with its weight-gradient
   * GEMM (`async_tensor_model_parallel_allreduce`). Megatron-DeepSpeed turns it off whenever DeepSpeed
   * is on ("DeepSpeed seems to be incompatible with async_tensor_model_parallel_allreduce thus
   * temporarily disabling it", megatron/arguments.py), so the reduction blocks. Sequence parallelism
   * keeps its own asynchronous reduce-scatter either way.
   */
  asyncTpGradReduce: boolean;
  /**
   * DeepSpeed's `DeepSpeedEngine.backward` reads the loss of every micro-batch for its monitor with
   * `loss.mean().item()` (#3428: `self.losses.append(...)` on all but the last micro-batch of a step in v0.9.3 to
   * v0.10.0, `self.losses += ...` on every micro-batch from v0.10.1; #5135 removed it in v0.13.3): a blocking
   * device-to-host copy on the stage that computes the loss, before `scaled_loss.backward()`. Modelled on every
   * micro-batch.
   */
  lossItemSync: boolean;
  /**
   * With tensor parallelism DeepSpeed's pipeline engine splits the activations and gradients it sends over the TP
   * ranks (`is_pipe_partitioned` = `is_grad_partitioned` = model parallel, runtime/pipe/engine.py), and rebuilding
   * them (`PartitionedTensor.from_meta`, runtime/utils.py) reads the received meta tensor with `.tolist()`, a
   * blocking copy: a non-first stage's host waits for the received activations before it issues a forward, a
   * non-last stage's host for the received gradients before a backward.
   */
  partitionedPipeSync: boolean;
  /**
   * DeepSpeed's `_exec_load_micro_batch` runs on the last pipeline stage too: it takes the batch from its own
   * data iterator through Megatron's `get_batch_pipe` to get the labels (broadcast_data's two broadcasts over the
   * TP group, its blocking copies, the masks and position ids: 10 calls). At pp 1 that is the first stage's load;
   * with a pipeline the last stage pays it again. Its schedule issues the activations' receive first
   * (`TrainSchedule`: RecvActivation, then LoadMicroBatch), so the blocking copies wait for the activations.
   */
  lastStageLoadsBatch: boolean;
  /**
   * The interleaved schedule runs every forward before any backward when there are as many micro-batches as
   * stages (`if num_microbatches == pipeline_parallel_size: all_warmup_microbatches = True`): Megatron-LM's
   * schedules.py until NVIDIA/Megatron-LM 4295be1a (November 2024), kept in Megatron-DeepSpeed's copy
   * (megatron/core/pipeline_parallel/schedules.py). Megatron-Core now caps the warm-up at every forward only.
   */
  interleavedAllWarmupWhenOneGroup: boolean;
  source: string;
}

/**
 * Host cost of one eager op. PyTorch's operator micro-benchmark (benchmarks/operator_benchmark) reports
 * `addmm_M1_N1_K1_cuda`, eager, "Forward Execution Time (us): 16.095" (posted in pytorch/pytorch pull
 * request #38421, 2020). At M = N = K = 1 the kernel itself is negligible, so the figure is the host-side
 * cost of issuing one op from Python on a CUDA device. A published benchmark, not a fit; the real figure
 * depends on the host CPU and PyTorch version (calibrate to replace it).
 */
export const PYTORCH_EAGER_OP_NS = 16_000;

/**
 * Host cost of one c10d collective call: `torch.distributed.all_reduce`, "c10d time 89us" in the table of
 * pytorch/pytorch#138773 (torch 2.4, CPU-side time from the profiler; all_gather 131 µs with the output
 * allocation, reduce_scatter 122 µs; the host hardware is not stated). The only published figure for this
 * quantity we know of; it is not fitted (calibrate to replace it).
 */
export const PYTORCH_C10D_COLLECTIVE_NS = 89_000;

/**
 * Megatron-DeepSpeed (microsoft/Megatron-DeepSpeed, 2023) on PyTorch eager with DeepSpeed's engine:
 * the framework of the vTrain measurement set.
 */
export const MEGATRON_DEEPSPEED: FrameworkSpec = {
  name: 'megatron-deepspeed',
  hostOpNs: PYTORCH_EAGER_OP_NS,
  hostCollectiveNs: PYTORCH_C10D_COLLECTIVE_NS,
  layerForwardSync: true,
  fusedSoftmaxMaxSeq: 4096,
  fp32CrossEntropy: true,
  asyncTpGradReduce: false,
  lossItemSync: true,
  partitionedPipeSync: true,
  lastStageLoadsBatch: true,
  interleavedAllWarmupWhenOneGroup: true,
  source:
    'microsoft/Megatron-DeepSpeed megatron/model/transformer.py (torch.tensor(0.0, device=...) in ' +
    'ParallelTransformerLayer.forward; CoreAttention: baddbmm, FusedScaleMaskSoftmax, RNG-tracker fork + dropout, ' +
    'bmm, permute().contiguous()), megatron/model/fused_softmax.py is_kernel_available, ' +
    'megatron/arguments.py (async TP all-reduce off with DeepSpeed), megatron/core/tensor_parallel/cross_entropy.py; ' +
    'deepspeed/runtime/activation_checkpointing/checkpointing.py (RNG save/restore, nested autograd.backward); ' +
    'host op cost: PyTorch operator benchmark addmm_M1_N1_K1_cuda 16.1 µs (pytorch/pytorch#38421); ' +
    'collective call: c10d all_reduce 89 µs CPU-side (pytorch/pytorch#138773); ' +
    'deepspeed/runtime/engine.py backward (loss.mean().item(), v0.9.3-v0.13.2), ' +
    'runtime/pipe/engine.py (PartitionedTensor.from_meta in _exec_forward_pass / _exec_backward_pass, ' +
    '_exec_load_micro_batch on the last stage), runtime/pipe/schedule.py TrainSchedule; ' +
    'megatron/core/pipeline_parallel/schedules.py forward_backward_pipelining_with_interleaving ' +
    '(all warm-up when m = p)',
};

/** Names a scenario may give in `training.framework`; `none` is the framework-agnostic model. */
export const FRAMEWORK_NAMES = ['none', 'megatron-deepspeed'] as const;
export type FrameworkName = (typeof FRAMEWORK_NAMES)[number];

/** The framework model of a scenario's `training.framework`, or undefined for `none`. */
export function frameworkByName(name: FrameworkName): FrameworkSpec | undefined {
  switch (name) {
    case 'none':
      return undefined;
    case 'megatron-deepspeed':
      return MEGATRON_DEEPSPEED;
  }
}

/** How the framework runs a pipeline schedule (without one: Megatron-Core as it is today). */
export function scheduleRules(fw: FrameworkSpec | undefined): ScheduleRules {
  return { allWarmupWhenOneGroup: fw?.interleavedAllWarmupWhenOneGroup ?? false };
}

/** Megatron's default `--make-vocab-size-divisible-by`. */
export const MEGATRON_VOCAB_DIVISIBLE_BY = 128;

/** A vocabulary padded as Megatron pads it (`_vocab_size_with_padding`): up to a multiple of `divisibleBy` × tp. */
export function padVocab(vocab: number, tp: number, divisibleBy = MEGATRON_VOCAB_DIVISIBLE_BY): number {
  const unit = divisibleBy * tp;
  return Math.ceil(vocab / unit) * unit;
}

/** Host ns of `calls` framework calls and `collectives` c10d collective calls. */
export function hostCost(fw: FrameworkSpec, calls: number, collectives = 0): number {
  return calls * fw.hostOpNs + collectives * fw.hostCollectiveNs;
}
