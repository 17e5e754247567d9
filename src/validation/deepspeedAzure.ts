import { csvRecords } from './dataFiles.js';
import { megatronFlopsPerIteration } from './megatronSc21.js';
import type { StepTask } from './stepSets.js';

/**
 * DeepSpeed's ZeRO-3 runs of GPT-3 175B on Azure (test/validation/deepspeed-azure-zero3.csv: the DeepSpeed blog of
 * 2022-07-26, Figure 5, and its recipe run-175b.sh). How a row becomes a scenario (nothing fitted to a row):
 * - dgx-a100-80gb nodes (8 A100 80 GB on NVSwitch, one 200 Gb/s HDR NIC a GPU: the NDm A100 v4), nodes = GPUs / 8;
 * - GPT-3 175B (96 layers, hidden 12,288, 96 heads, FFN 4h), the GPT-2 vocabulary of 50,257 that Megatron-DeepSpeed
 *   pads to 50,304, the row's sequence; fp16, Megatron's fused softmax (no flash attention), full recompute;
 * - ZeRO-3 over every GPU as DeepSpeed runs it, overlap_comm on, reduce_bucket_size 9e7 elements of fp16;
 *   gradient accumulation 1, so the global batch is the micro-batch × the GPUs;
 * - Megatron-DeepSpeed's host model (framework.ts).
 * The measured time is the blog's TFLOP/s per GPU turned back into a step by its own formula (Megatron's count, with
 * the padded vocabulary).
 */
const GPT3 = { layers: 96, hidden: 12288, heads: 96, vocab: 50257, paddedVocab: 50304 };

/** The recipe's reduce_bucket_size, 9e7 elements of fp16 gradients, in MiB. */
const REDUCE_BUCKET_MIB = (9e7 * 2) / 2 ** 20;

export function deepspeedAzureTasks(limit: number): StepTask[] {
  return csvRecords('deepspeed-azure-zero3.csv')
    .slice(0, limit)
    .map((r) => {
      const [seq, gpus, mb] = [Number(r.seq_len), Number(r.gpus), Number(r.micro_batch)];
      const batch = mb * gpus;
      const flops = megatronFlopsPerIteration(batch, seq, GPT3.layers, GPT3.hidden, GPT3.paddedVocab);
      return {
        set: 'deepspeed-azure-zero3' as const,
        label: `175B seq ${seq} on ${gpus} A100 mb${mb}`,
        measuredS: flops / (Number(r.tflops_per_gpu) * 1e12 * gpus),
        raw: {
          name: `deepspeed-azure-175b-${gpus}gpu-seq${seq}-mb${mb}`,
          cluster: { preset: 'dgx-a100-80gb', nodes: gpus / 8 },
          model: {
            arch: 'gpt',
            layers: GPT3.layers,
            hidden: GPT3.hidden,
            heads: GPT3.heads,
            ffnHidden: 4 * GPT3.hidden,
            seqLen: seq,
            vocab: GPT3.vocab,
            tiedEmbeddings: true,
          },
          training: {
            globalBatch: batch,
            microBatch: mb,
            precision: 'fp16',
            optimizer: 'adam',
            flashAttention: false,
            framework: 'megatron-deepspeed',
          },
          parallel: {
            tp: 1,
            pp: 1,
            dp: gpus,
            zero: 3,
            recompute: 'full',
            zeroConfig: { stage3: 'deepspeed', reduceBucketMB: REDUCE_BUCKET_MIB, overlapComm: true },
          },
        },
        baseDir: '.',
      };
    });
}
