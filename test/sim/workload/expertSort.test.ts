import { describe, expect, it } from 'vitest';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import type { MicroBatchShape } from '../../../src/sim/workload/ops.js';
import { buildBlocks } from '../../../src/sim/workload/transformerOps.js';
import { moeSyncPoints } from '../../../src/sim/parallel/moeSync.js';

// Megatron-Core's alltoall dispatcher sorts the received rows by local expert when a rank holds more than one
// (sort_chunks_by_idxs, "Permutation 2") and sorts the outputs back before the combine: one read and one write of
// every row the rank's experts compute, forward and backward.

const mixtral = modelPreset('mixtral-8x7b'); // 8 experts, top 2, hidden 4096
const base: MicroBatchShape = {
  microBatch: 1,
  seqLen: 4096,
  dtype: 'bf16',
  tp: 1,
  sequenceParallel: false,
  flashAttention: true,
  recompute: 'none',
};
const layer0 = (shape: MicroBatchShape) => buildBlocks(mixtral, shape).find((b) => b.name === 'layer.0')!;
const names = (ops: { name: string }[]) => ops.map((o) => o.name);

describe('the sort of received rows by local expert', () => {
  it('moves 2 × rows × hidden × 2 bytes each way, rows = tokens × top-k, with 2 local experts (ep 4 of 8)', () => {
    const l = layer0({ ...base, ep: 4 });
    const sort = l.forward.find((o) => o.name === 'experts.sort')!;
    const unsort = l.forward.find((o) => o.name === 'experts.unsort')!;
    const rows = 4096 * 2;
    for (const op of [sort, unsort]) expect(op.bytes).toBe(2 * rows * 4096 * 2);
    expect(l.backward.find((o) => o.name === 'experts.sort.bwd')!.bytes).toBe(sort.bytes);
    expect(l.backward.find((o) => o.name === 'experts.unsort.bwd')!.bytes).toBe(unsort.bytes);
    // In order: after the permute (and its dispatch), around the experts' GEMMs, before the unpermute.
    const f = names(l.forward);
    expect(f.indexOf('permute')).toBeLessThan(f.indexOf('experts.sort'));
    expect(f.indexOf('experts.sort')).toBeLessThan(f.indexOf('experts.fc1'));
    expect(f.indexOf('experts.fc2')).toBeLessThan(f.indexOf('experts.unsort'));
    expect(f.indexOf('experts.unsort')).toBeLessThan(f.indexOf('unpermute'));
  });

  it('is not there with one local expert (ep 8 of 8) or with DeepEP', () => {
    for (const shape of [
      { ...base, ep: 8 },
      { ...base, ep: 4, dispatcher: 'deepep' as const },
    ]) {
      const l = layer0(shape);
      expect(names([...l.forward, ...l.backward]).filter((n) => n.startsWith('experts.sort'))).toEqual([]);
    }
  });

  it('moves the combine after the inverse sort and the dispatch gradient after the sort backward', () => {
    const l = layer0({ ...base, ep: 4 });
    const ctx = { model: mixtral, ep: 4, etp: 1, tp: 1, tokens: 4096, routedTokens: 4096, elementBytes: 2 };
    const at = (ops: { name: string }[], label: string) => {
      const s = moeSyncPoints(names(ops), ctx).find((x) => x.label.endsWith(label))!;
      return ops[s.afterOp].name;
    };
    expect(at(l.forward, 'dispatch')).toBe('permute');
    expect(at(l.forward, 'combine')).toBe('experts.unsort');
    expect(at(l.backward, 'combine gradient')).toBe('unpermute.bwd');
    expect(at(l.backward, 'dispatch gradient')).toBe('experts.sort.bwd');
  });
});
