import { describe, expect, it } from 'vitest';
import { gpuGeneration, parallelStyle, setupKindProblem } from '../../src/accuracy/setupKind.js';

describe('the kind of a prediction', () => {
  it('names the GPU generation by compute capability', () => {
    expect([7.0, 8.0, 8.6, 9.0, 10.0, undefined].map(gpuGeneration)).toEqual([
      'volta',
      'ampere',
      'ampere',
      'hopper',
      'other',
      'other',
    ]);
  });

  it('names the parallel style: ZeRO-3 first, then a pipeline, then tensor or context parallelism', () => {
    expect(parallelStyle({ tp: 8, pp: 4, cp: 1, zero: 3 })).toBe('sharded-data');
    expect(parallelStyle({ tp: 8, pp: 4, zero: 1 })).toBe('pipeline');
    expect(parallelStyle({ tp: 1, pp: 1, cp: 2, zero: 1 })).toBe('tensor');
    expect(parallelStyle({ tp: 1, pp: 1, zero: 2 })).toBe('data');
  });

  it('says what is wrong with a kind read from a file', () => {
    expect(setupKindProblem({ gpu: 'ampere', style: 'data', scale: 'one-node', host: 'kernels-only' })).toBeUndefined();
    expect(setupKindProblem({ gpu: 'tpu', style: 'data', scale: 'one-node', host: 'kernels-only' })).toBe(
      'has gpu "tpu"; expected volta | ampere | hopper | other',
    );
    expect(setupKindProblem({ gpu: 'ampere', style: 'data', scale: 'one-node' })).toBe(
      'has host missing; expected framework-host | kernels-only',
    );
    expect(setupKindProblem({ gpu: 'ampere', style: 'data', scale: 'one-node', host: 'kernels-only', x: 1 })).toBe(
      'has unknown field(s) x',
    );
    expect(setupKindProblem([1])).toMatch(/expected an object/);
  });
});
