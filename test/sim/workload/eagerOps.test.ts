import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { A100_SXM4_80GB, H200_SXM_141GB } from '../../../src/sim/hardware/gpus.js';
import {
  GENERIC_KERNEL_BYTES_PER_ELEMENT,
  GENERIC_KERNEL_ELEMENTS_PER_SM_CYCLE,
  genericKernelNs,
  opTimeNs,
} from '../../../src/sim/workload/kernelTime.js';
import { activationBytesPerLayer } from '../../../src/sim/memory/activations.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { eagerRmsNorm, eagerRotary, eagerSwiglu } from '../../../src/sim/workload/eagerOps.js';
import { layerContext } from '../../../src/sim/workload/layerContext.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import type { Op } from '../../../src/sim/workload/ops.js';
import { buildBlocks } from '../../../src/sim/workload/transformerOps.js';
import { scenarioOf } from '../../helpers/scenario.js';

const bytes = (ops: Op[]) => ops.reduce((a, o) => a + o.bytes, 0);
const shape = {
  microBatch: 2,
  seqLen: 4096,
  dtype: 'bf16' as const,
  tp: 1,
  sequenceParallel: false,
  flashAttention: true,
  recompute: 'none' as const,
  kernels: 'eager' as const,
};

describe("eager PyTorch's element-wise kernels for Llama (Hugging Face modeling_llama.py)", () => {
  const c = layerContext(modelPreset('llama2-7b'), shape);
  const n = c.tokens * c.h;

  it(
    'RMSNorm: 6 fp32 and bf16 passes forward (36 bytes per element; ' +
      'the per-token rsqrt is not a pass) and 98 bytes backward (the weight gradient, ' +
      'the three kernels of pow and the residual join included), against 4 and 8 fused',
    () => {
      const s = eagerRmsNorm('ln', c, ['w']);
      expect(s.forward).toHaveLength(6);
      expect(bytes(s.forward)).toBe(36 * n);
      expect(bytes(s.backward)).toBe(98 * n);
      // the weight's gradient completes once
      expect(s.backward.filter((o) => o.gradParams).map((o) => o.gradParams)).toEqual([['w']]);
    },
  );

  it(
    'rotary embedding on Q and K: 10e bytes per element forward, ' +
      '15e backward; SwiGLU: 5e forward, 9e backward per MLP element',
    () => {
      const qk = c.tokens * (c.headsPerRank + c.kvHeadsPerRank) * c.headDim;
      const r = eagerRotary(c);
      expect(bytes(r.forward)).toBe(10 * 2 * qk);
      expect(bytes(r.backward)).toBe(15 * 2 * qk);
      const m = c.tokens * c.ffnPerRank;
      const g = eagerSwiglu(c);
      expect(bytes(g.forward)).toBe(5 * 2 * m);
      expect(bytes(g.backward)).toBe(9 * 2 * m);
    },
  );

  it(
    'keeps more for the backward: per layer (2·(4 + e) + e·f/h)·s·b·h ' +
      'bytes more for Llama, none for GPT or with full recompute',
    () => {
      const m = modelPreset('llama2-7b');
      const a = {
        microBatch: 2,
        seqLen: 4096,
        tp: 1,
        sequenceParallel: false,
        recompute: 'none' as const,
        flashAttention: true,
      };
      const sbh = 2 * 4096 * m.hidden;
      const extra = activationBytesPerLayer(m, { ...a, eager: true }) - activationBytesPerLayer(m, a);
      expect(extra).toBeCloseTo((2 * (4 + 2) + (2 * m.ffnHidden) / m.hidden) * sbh, -3);
      const gpt = modelPreset('gpt3-1.3b');
      expect(activationBytesPerLayer(gpt, { ...a, eager: true })).toBe(activationBytesPerLayer(gpt, a));
      expect(activationBytesPerLayer(m, { ...a, recompute: 'full', eager: true })).toBe(
        activationBytesPerLayer(m, { ...a, recompute: 'full' }),
      );
    },
  );

  it("changes Llama's layers and every model's loss only: GPT and BERT keep their layers' kernels", () => {
    for (const preset of ['gpt3-1.3b', 'bert-large']) {
      const m = modelPreset(preset);
      const fused = buildBlocks(m, { ...shape, seqLen: 512, kernels: 'fused' });
      const eager = buildBlocks(m, { ...shape, seqLen: 512 });
      expect(eager.slice(0, -1)).toEqual(fused.slice(0, -1));
      // The head block differs in its cross-entropy alone (eager PyTorch's cast and log-softmax kernels).
      const notLoss = (ops: Op[]) => ops.filter((o) => !o.name.startsWith('loss'));
      for (const pass of ['forward', 'backward'] as const)
        expect(notLoss(eager.at(-1)![pass])).toEqual(notLoss(fused.at(-1)![pass]));
    }
  });

  it(
    "slows IBM's Llama-2 7B FSDP step about as much as " + 'torch.compile sped it up (57% → 68% MFU, 1.19×), within 3%',
    () => {
      // torch.compile fuses the same element-wise work into its own kernels; the GEMMs and the attention kernel are
      // the same either way. Without the generic kernels' indexing rate (kernelTime.ts) the model gave 1.14.
      const raw = {
        cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
        model: { preset: 'llama2-7b' },
        training: { globalBatch: 32, microBatch: 2, seqLen: 4096, precision: 'bf16', flashAttention: true },
        parallel: { zero: 3 },
      };
      const fused = simulateStep(scenarioOf(raw)).result.stepTimeS;
      const eager = simulateStep(scenarioOf({ ...raw, training: { ...raw.training, kernels: 'eager' } })).result
        .stepTimeS;
      expect(Math.abs(eager / fused / (68 / 57) - 1)).toBeLessThan(0.03);
    },
  );
});

describe(
  "PyTorch's generic element-wise kernels, " +
    'measured on an H200 (reports/calibration/h200/llama-layer-kernels.json)',
  () => {
    const profile = JSON.parse(readFileSync('reports/calibration/h200/llama-layer-kernels.json', 'utf8')) as Record<
      string,
      { kernels: { name: string; count: number; totalUs: number }[] }
    >;
    const kernels = profile['llama2-7b'].kernels;
    // Llama-2-7B at 4k tokens, micro-batch 1: s·h = 4096 · 4096 elements per activation; rotary's
    // negation covers half of Q or K.
    const sh = 4096 * 4096;
    const NOCAST = 'at::native::gpu_kernel_impl_nocast<at::native::';
    const generic: [string, number, number][] = [
      // kernel name fragment, calls, elements per call
      [`elementwise_kernel<128, 4, ${NOCAST}BinaryFunctor<c10::BFloat16`, 12, sh], // x·weight, q·cos, …
      [`elementwise_kernel<128, 4, ${NOCAST}CUDAFunctor_add<c10::BFloat16`, 4, sh], // rotary adds
      [`elementwise_kernel<128, 2, ${NOCAST}BinaryFunctor<float`, 4, sh], // x·rsqrt(var)
      [`elementwise_kernel<128, 2, ${NOCAST}BUnaryFunctor<float`, 2, sh], // the mean's gradient
      ['neg_kernel_cuda', 4, sh / 2],
      ['unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda', 4, sh], // bf16 → fp32
    ];

    it(
      'index 354 G elements/s on the H200, whatever they move: ' +
        '1.35 per SM and cycle, 12 bytes of the streaming bandwidth',
      () => {
        let elements = 0;
        let seconds = 0;
        for (const [fragment, calls, perCall] of generic) {
          const rows = kernels.filter((k) => k.name.includes(fragment));
          expect(rows, fragment).toHaveLength(1);
          expect(rows[0].count, fragment).toBe(calls);
          elements += calls * perCall;
          seconds += rows[0].totalUs / 1e6;
        }
        const rate = elements / seconds;
        expect(rate).toBeGreaterThan(340e9);
        expect(rate).toBeLessThan(370e9);
        const perSmCycle = rate / (H200_SXM_141GB.smCount * H200_SXM_141GB.boostClockMHz! * 1e6);
        expect(GENERIC_KERNEL_ELEMENTS_PER_SM_CYCLE / perSmCycle).toBeCloseTo(1, 2);
        const streamingBytesPerS = H200_SXM_141GB.hbmBandwidthGBps * H200_SXM_141GB.hbmEfficiency * 1e9;
        expect(GENERIC_KERNEL_BYTES_PER_ELEMENT).toBe(Math.round(streamingBytesPerS / rate));
        // The rate scales with SMs and clock: an A100 (108 SMs at 1,410 MHz) indexes 58% as many per second.
        expect(genericKernelNs(1e9, A100_SXM4_80GB) / genericKernelNs(1e9, H200_SXM_141GB)).toBeCloseTo(
          (132 * 1980) / (108 * 1410),
          6,
        );
        // Without a clock the bytes stand in: 12 per element of the GPU's own streaming bandwidth.
        const noClock = { ...H200_SXM_141GB, boostClockMHz: undefined };
        expect(genericKernelNs(1e9, noClock)).toBeCloseTo((1e9 * 12) / (streamingBytesPerS / 1e9), 3);
      },
    );

    it(
      "charges a Llama-2-7B layer's non-GEMM, " +
        "non-attention kernels within 5% of the profile's (3.03 ms forward + backward)",
      () => {
        const measuredS =
          kernels.filter((k) => !/nvjet|gemm|cudnn|sdpa|flash/i.test(k.name)).reduce((a, k) => a + k.totalUs, 0) / 1e6;
        const layer = buildBlocks({ ...modelPreset('llama2-7b'), layers: 1 }, { ...shape, microBatch: 1 })[1];
        const predictedS =
          [...layer.forward, ...layer.backward]
            .filter((o) => o.kind === 'elementwise')
            .reduce((a, o) => a + opTimeNs(o, H200_SXM_141GB, 'bf16'), 0) / 1e9;
        expect(measuredS).toBeGreaterThan(2.9e-3);
        expect(Math.abs(predictedS / measuredS - 1)).toBeLessThan(0.05);
      },
    );
  },
);
