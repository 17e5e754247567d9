import { describe, expect, it } from 'vitest';
import { diagnose, trafficName, type StepShares } from '../../../src/sim/stats/bottleneck.js';
import type { ExposureRow } from '../../../src/sim/stats/exposure.js';

const step = (over: Partial<StepShares>): StepShares => ({
  stepTimeS: 1,
  computeS: 0.9,
  exposedCommS: 0.05,
  bubbleS: 0.03,
  hostOptimizerS: 0,
  idleS: 0.02,
  fits: true,
  shortfallBytes: 0,
  capacityBytes: 80 * 2 ** 30,
  ...over,
});
const row = (over: Partial<ExposureRow>): ExposureRow => ({
  kind: 'tp-collective',
  medium: 'network',
  exposedS: 0.3,
  smallShare: 0,
  ...over,
});

describe('diagnose: what bounds the step', () => {
  it('memory first: a job that does not fit is memory-bound by its shortfall over capacity', () => {
    const b = diagnose(step({ fits: false, shortfallBytes: 8 * 2 ** 30, exposedCommS: 0.5 }), []);
    expect(b.bound).toBe('memory');
    expect(b.share).toBeCloseTo(0.1, 12);
    expect(b.detail).toBe('does not fit: 8.0 GiB short per GPU');
  });

  it('memory too when the GPUs fit but the offloaded optimizer state does not fit in the host memory', () => {
    const b = diagnose(
      step({
        host: {
          bytesPerNode: 1280 * 2 ** 30,
          capacityBytes: 1024 * 2 ** 30,
          fits: false,
          shortfallBytes: 256 * 2 ** 30,
        },
        exposedCommS: 0.5,
      }),
      [],
    );
    expect(b.bound).toBe('memory');
    expect(b.share).toBeCloseTo(0.25, 12);
    expect(b.detail).toBe('the offloaded optimizer state does not fit in host memory: 256.0 GiB short per node');
  });

  it('compute when no waiting takes 10% of the step, with the compute share', () => {
    const b = diagnose(step({ computeS: 0.92, exposedCommS: 0.099 }), []);
    expect(b.bound).toBe('compute');
    expect(b.share).toBeCloseTo(0.92, 12);
  });

  it('names the exposed traffic and its wire with its share of the step', () => {
    const b = diagnose(step({ stepTimeS: 2, exposedCommS: 0.6, bubbleS: 0.3 }), [
      row({ exposedS: 0.5 }),
      row({ kind: 'dp-allreduce', exposedS: 0.1 }),
    ]);
    expect(b.bound).toBe('exposed communication');
    expect(b.share).toBeCloseTo(0.3, 12);
    expect(b.detail).toBe(
      'tensor-parallel collectives over the network (25.0% of the step; all exposed communication 30.0%)',
    );
  });

  it('calls it latency of small collectives when most of the top traffic is in collectives under 1 MiB', () => {
    const b = diagnose(step({ exposedCommS: 0.4 }), [
      row({ kind: 'dp-allreduce', medium: 'nvlink', exposedS: 0.4, smallShare: 0.8 }),
    ]);
    expect(b.bound).toBe('latency of small collectives');
    expect(b.detail).toContain('mostly collectives under 1 MiB');
  });

  it('pipeline bubble or idle time when either is the largest wait', () => {
    expect(diagnose(step({ bubbleS: 0.25, exposedCommS: 0.2 }), [row({})]).bound).toBe('pipeline bubble');
    expect(diagnose(step({ idleS: 0.3 }), []).bound).toBe('idle (load imbalance)');
  });

  it('the optimizer on the host when the GPUs mostly wait for CPU-Adam, naming the node rate to change', () => {
    const b = diagnose(step({ computeS: 0.3, hostOptimizerS: 0.6, idleS: 0.05 }), []);
    expect(b.bound).toBe('optimizer on the host');
    expect(b.share).toBeCloseTo(0.6, 12);
    expect(b.detail).toMatch(/CPU-Adam update .*cluster\.node\.hostAdamParamsPerS/);
  });

  it('names traffic rows for people', () => {
    expect(trafficName(row({ kind: 'zero-gather', medium: 'pcie' }))).toBe('ZeRO-3 weight gathers over PCIe');
    expect(trafficName(row({ kind: 'dp-allreduce', medium: 'nvlink' }))).toBe(
      'data-parallel gradient all-reduce over NVLink',
    );
  });
});
