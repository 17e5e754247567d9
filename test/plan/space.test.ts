import { describe, expect, it } from 'vitest';
import { scenarioFromFile } from '../../src/cli/scenarioInput.js';
import {
  defaultSpace,
  defaultVirtualStages,
  narrowSpace,
  parseSpaceEntry,
  SpaceSyntaxError,
} from '../../src/plan/space.js';

const s70b = scenarioFromFile('scenarios/llama2-70b-tp8-scale.yaml');

describe('the plan space', () => {
  it('tries tensor parallelism in powers of 2 inside the node that divide heads, KV heads and FFN width', () => {
    // Llama-2-70B: 64 heads, 8 KV heads, FFN 28,672, on 8-GPU nodes.
    expect(defaultSpace(s70b).tp).toEqual([1, 2, 4, 8]);
    // 12 heads: 8 does not divide them.
    expect(defaultSpace({ ...s70b, model: { ...s70b.model, heads: 12, kvHeads: 12 } }).tp).toEqual([1, 2, 4]);
    // 4 KV heads (grouped queries): tp 8 would split a KV head.
    expect(defaultSpace({ ...s70b, model: { ...s70b.model, kvHeads: 4 } }).tp).toEqual([1, 2, 4]);
  });

  it('tries context parallelism only from 8,192 tokens, with fused attention and no framework model', () => {
    expect(defaultSpace(s70b).cp).toEqual([1]);
    const long = { ...s70b, training: { ...s70b.training, seqLen: 8192 } };
    expect(defaultSpace(long).cp).toEqual([1, 2, 4]);
    expect(defaultSpace({ ...long, training: { ...long.training, flashAttention: false } }).cp).toEqual([1]);
  });

  it('tries every pipeline depth up to the layer count and chunks per stage from 2 to 8 that divide its layers', () => {
    expect(defaultSpace(s70b).pp).toHaveLength(80);
    expect(defaultVirtualStages(40)).toEqual([2, 4, 5, 8]);
    expect(defaultVirtualStages(7)).toEqual([7]);
    expect(defaultVirtualStages(1)).toEqual([]);
  });

  it('reads --space and --fix by name or by field, and replaces only what they name', () => {
    const narrowed = narrowSpace(
      defaultSpace(s70b),
      ['tp=2,4', 'recompute=none,full'],
      ['parallel.zero=1', 'training.microBatch=2'],
    );
    expect(narrowed.tp).toEqual([2, 4]);
    expect(narrowed.recompute).toEqual(['none', 'full']);
    expect(narrowed.zero).toEqual([1]);
    expect(narrowed.microBatch).toEqual([2]);
    expect(narrowed.pp).toEqual(defaultSpace(s70b).pp);
    expect(parseSpaceEntry('sequenceParallel=false,true').values).toEqual([false, true]);
    expect(parseSpaceEntry('tp=2,2,4').values).toEqual([2, 4]);
  });

  it('refuses names it does not search, values outside the allowed and --fix with several values', () => {
    expect(() => parseSpaceEntry('bucketMB=5')).toThrow(/not a setting the plan searches; use one of tp, cp, pp/);
    expect(() => parseSpaceEntry('zero=4')).toThrow(/zero: '4' is not one of 0, 1, 2, 3/);
    expect(() => parseSpaceEntry('tp=0')).toThrow(/tp: '0' is not a whole number/);
    expect(() => parseSpaceEntry('tp')).toThrow(SpaceSyntaxError);
    expect(() => narrowSpace(defaultSpace(s70b), [], ['tp=2,4'])).toThrow(/--fix tp=2,4: give one value/);
  });
});
