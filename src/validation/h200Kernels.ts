import { readFileSync } from 'node:fs';
import { H200_SXM_141GB } from '../sim/hardware/gpus.js';
import type { GpuSpec } from '../sim/hardware/types.js';
import type { AttentionKernel } from '../sim/workload/attentionKernels.js';
import { opTimeNs } from '../sim/workload/kernelTime.js';
import type { ModelSpec } from '../sim/workload/model.js';
import type { MicroBatchShape, Op } from '../sim/workload/ops.js';
import { buildBlocks } from '../sim/workload/transformerOps.js';
import { MEGATRON_DEEPSPEED } from '../sim/workload/framework.js';

/**
 * The model against what PyTorch measured on one H200 (reports/calibration/h200: `attention.json` from
 * scripts/measure-attention.py, `llama-layer.json` from scripts/measure-llama-layer.py), with the H200 preset as it
 * stands. GPU time only: the measurements are CUDA-event times of GPU-bound shapes, and the model's ops are timed
 * with their launch overhead and no host cost. Print with `npm run validate -- --set h200-kernels`.
 */

export interface KernelComparison {
  name: string;
  predictedS: number;
  measuredS: number;
  errorPct: number;
}

const compare = (name: string, predictedS: number, measuredS: number): KernelComparison => ({
  name,
  predictedS,
  measuredS,
  errorPct: (100 * (predictedS - measuredS)) / measuredS,
});

const sumSeconds = (ops: Op[], gpu: GpuSpec = H200_SXM_141GB) =>
  ops.reduce((a, o) => a + opTimeNs(o, gpu, 'bf16'), 0) / 1e9;

interface AttentionCase {
  backend: string;
  seq: number;
  batch: number;
  heads: number;
  headDim: number;
  forwardS: number;
  backwardS: number;
}

/** SDPA's backends as the model names their kernels; the memory-efficient one has no figures. */
const KERNEL_OF_BACKEND: Record<string, AttentionKernel | undefined> = { flash: 'fa2', cudnn: 'cudnn' };

/** A one-layer model of `hidden`, `heads` (and as many key/value heads), `ffnHidden`, `seqLen`. */
function oneLayer(
  name: string,
  hidden: number,
  heads: number,
  kvHeads: number,
  ffnHidden: number,
  seqLen: number,
): ModelSpec {
  return {
    name,
    arch: 'llama',
    layers: 1,
    hidden,
    heads,
    kvHeads,
    ffnHidden,
    seqLen,
    vocab: 32000,
    tiedEmbeddings: false,
  };
}

/** Layer 0 of `model` on one GPU: bf16 with flash attention unless `shape` says otherwise. */
function layerZero(model: ModelSpec, shape: Partial<MicroBatchShape> & Pick<MicroBatchShape, 'microBatch'>) {
  return buildBlocks(model, {
    seqLen: model.seqLen,
    dtype: 'bf16',
    tp: 1,
    sequenceParallel: false,
    flashAttention: true,
    recompute: 'none',
    ...shape,
  }).find((b) => b.layer === 0)!;
}

export function attentionComparisons(path = 'reports/calibration/h200/attention.json'): KernelComparison[] {
  const cases = (JSON.parse(readFileSync(path, 'utf8')) as { cases: AttentionCase[] }).cases;
  return cases.flatMap((c) => {
    const kernel = KERNEL_OF_BACKEND[c.backend];
    if (!kernel) return [];
    // The model's own attention ops of a layer with these heads and this batch.
    const layer = layerZero(
      oneLayer('attention', c.heads * c.headDim, c.heads, c.heads, 4 * c.heads * c.headDim, c.seq),
      { microBatch: c.batch, attentionKernel: kernel },
    );
    const core = (name: string) => layer.forward.concat(layer.backward).filter((o) => o.name === name);
    return [
      compare(`${kernel} forward, seq ${c.seq}`, sumSeconds(core('attn.core')), c.forwardS),
      compare(`${kernel} backward, seq ${c.seq}`, sumSeconds(core('attn.core.bwd')), c.backwardS),
    ];
  });
}

interface LayerCase {
  name: string;
  hidden: number;
  ffnHidden: number;
  heads: number;
  kvHeads: number;
  seqLen: number;
  microBatch: number;
  forwardSPerLayer: number;
  backwardSPerLayer: number;
  issueSPerLayer: number;
}

/**
 * Llama layers, forward and backward, for the shapes the GPU bounds: a shape whose host issue time reaches its GPU
 * time (TinyLlama at 2k here) measures the host, which this comparison leaves out. `eager` compares eager PyTorch
 * (`llama-layer.json`) with `training.kernels: eager`; `fused` compares the same layers under torch.compile
 * (`llama-layer-compiled.json`, Inductor fusing the element-wise work) with the default fused kernels.
 * The attention kernel is cuDNN's: PyTorch 2.11's SDPA chose it for every shape (the profiled runs), where `auto`
 * would mean FlashAttention-2 (the choice of PyTorch 2.2–2.10). The measured Llama-3-8B layer also copies its 8
 * key/value heads out to 32 (`repeat_kv`, about 0.5 ms of its kernels forward and backward in eager mode), which the
 * model leaves out as Hugging Face does when SDPA takes grouped queries itself (`enable_gqa`).
 */
export function llamaLayerComparisons(
  path = 'reports/calibration/h200/llama-layer.json',
  kernels: 'eager' | 'fused' = 'eager',
  gpu: GpuSpec = H200_SXM_141GB,
): KernelComparison[] {
  const cases = (JSON.parse(readFileSync(path, 'utf8')) as { cases: LayerCase[] }).cases;
  const label = kernels === 'eager' ? 'layer' : 'layer compiled';
  return cases
    .filter((c) => c.issueSPerLayer < 0.5 * (c.forwardSPerLayer + c.backwardSPerLayer))
    .flatMap((c) => {
      const layer = layerZero(oneLayer(c.name, c.hidden, c.heads, c.kvHeads, c.ffnHidden, c.seqLen), {
        microBatch: c.microBatch,
        kernels,
        attentionKernel: 'cudnn',
      });
      return [
        compare(`${c.name} ${label} forward, seq ${c.seqLen}`, sumSeconds(layer.forward, gpu), c.forwardSPerLayer),
        compare(`${c.name} ${label} backward, seq ${c.seqLen}`, sumSeconds(layer.backward, gpu), c.backwardSPerLayer),
      ];
    });
}

interface FallbackCase {
  batchHeads: number;
  seq: number;
  forwardS: number;
  backwardS: number;
  issueS: number;
}

/**
 * The torch fallback of Megatron's scale-mask-softmax (megatronOps.ts), forward and backward, as a Megatron-DeepSpeed
 * GPT layer in fp16 charges it, for the measured score shapes where Megatron falls back (b·np not a multiple of 4)
 * and the GPU bounds the measurement (host issue under half the GPU time; at 2 × 2048² and 2 × 1024² the host issuing
 * the kernels sets the time): one head of 64 per score matrix, micro-batch 1.
 */
export function softmaxFallbackComparisons(
  path = 'reports/calibration/h200/softmax-fallback.json',
): KernelComparison[] {
  const cases = (JSON.parse(readFileSync(path, 'utf8')) as { cases: FallbackCase[] }).cases;
  return cases
    .filter((c) => c.batchHeads % 4 !== 0 && c.issueS < 0.5 * (c.forwardS + c.backwardS))
    .flatMap((c) => {
      const gpt: ModelSpec = {
        ...oneLayer('gpt', 64 * c.batchHeads, c.batchHeads, c.batchHeads, 256 * c.batchHeads, c.seq),
        arch: 'gpt',
        tiedEmbeddings: true,
      };
      const layer = layerZero(gpt, {
        microBatch: 1,
        dtype: 'fp16',
        flashAttention: false,
        framework: MEGATRON_DEEPSPEED,
      });
      const softmax = (ops: Op[]) => ops.filter((o) => o.name.startsWith('attn.softmax'));
      return [
        compare(
          `softmax fallback forward, ${c.batchHeads} × ${c.seq}²`,
          sumSeconds(softmax(layer.forward)),
          c.forwardS,
        ),
        compare(
          `softmax fallback backward, ${c.batchHeads} × ${c.seq}²`,
          sumSeconds(softmax(layer.backward)),
          c.backwardS,
        ),
      ];
    });
}
