import { describe, expect, it } from 'vitest';
import { validateOptions, type PublishedCheckArgs } from '../../src/validation/validateArgs.js';

/** `--host-op-us` → `hostOpUs`: the key commander stores an option's value under. */
const key = (flag: string) => flag.slice(2).replace(/-(.)/g, (_, c: string) => c.toUpperCase());

/** The options as commander hands them over when `given` are on the command line (the others at their defaults). */
function check(given: Record<string, string | true> = {}) {
  const args: Record<string, unknown> = { set: 'vtrain', vocab: 'peer' };
  for (const [flag, value] of Object.entries(given)) args[key(flag)] = value;
  return validateOptions(args as unknown as PublishedCheckArgs, new Set(Object.keys(given)));
}

describe('npm run validate options', () => {
  it('defaults to the whole vTrain set as text', () => {
    expect(check()).toEqual({
      hostOpUs: undefined,
      hostCollectiveUs: undefined,
      vocab: 'peer',
      set: 'vtrain',
      only: undefined,
      limit: Infinity,
      json: false,
      decompose: false,
      all: false,
      writeResiduals: false,
      fit: false,
    });
  });

  it('reads each option', () => {
    expect(check({ '--set': 'megatron-sc21', '--limit': '3', '--json': true })).toMatchObject({
      set: 'megatron-sc21',
      limit: 3,
      json: true,
    });
    expect(check({ '--only': 'single', '--decompose': true })).toMatchObject({ only: 'single', decompose: true });
    expect(check({ '--host-op-us': '18' }).hostOpUs).toBe(18);
    expect(check({ '--host-collective-us': '13.4' }).hostCollectiveUs).toBe(13.4);
    expect(check({ '--vocab': 'megatron-padded' }).vocab).toBe('megatron-padded');
  });

  it('says what is wrong and what is allowed', () => {
    expect(() => check({ '--set': 'mlperf' })).toThrow(
      "--set: unknown set 'mlperf' (vtrain | megatron-sc21 | megatron-sp22 | h200-kernels)",
    );
    expect(check({ '--set': 'megatron-sp22' }).set).toBe('megatron-sp22');
    expect(() => check({ '--only': 'both' })).toThrow("--only: 'both' is not a group (single | multi)");
    expect(() => check({ '--limit': '0' })).toThrow("--limit: expected a whole number ≥ 1, got '0'");
    expect(() => check({ '--limit': '-3' })).toThrow("--limit: expected a whole number ≥ 1, got '-3'");
    expect(() => check({ '--vocab': 'padded' })).toThrow("--vocab: unknown split 'padded' (peer | megatron-padded)");
    expect(() => check({ '--host-op-us': '0' })).toThrow("--host-op-us: expected µs > 0 (at most 10000), got '0'");
    expect(() => check({ '--host-collective-us': 'x' })).toThrow(
      "--host-collective-us: expected µs > 0 (at most 100000), got 'x'",
    );
  });

  it("refuses the vtrain set's options with another set instead of ignoring them", () => {
    expect(() => check({ '--set': 'megatron-sc21', '--only': 'single' })).toThrow(
      '--only: for the vtrain set only; --set megatron-sc21 takes --limit and --json',
    );
    expect(() => check({ '--set': 'h200-kernels', '--host-op-us': '18', '--decompose': true })).toThrow(
      '--host-op-us, --decompose: for the vtrain set only',
    );
    // Given, even at its default, it is refused: the default is the vtrain set's.
    expect(() => check({ '--set': 'megatron-sp22', '--vocab': 'peer' })).toThrow(/--vocab: for the vtrain set only/);
  });

  it('runs every set with --all and writes the residuals only from a whole run', () => {
    expect(check({ '--all': true, '--write-residuals': true })).toMatchObject({
      all: true,
      writeResiduals: true,
      limit: Infinity,
    });
    expect(check({ '--all': true, '--limit': '2', '--json': true })).toMatchObject({ all: true, limit: 2, json: true });
    expect(() => check({ '--write-residuals': true })).toThrow('--write-residuals: only with --all');
    expect(() => check({ '--all': true, '--write-residuals': true, '--limit': '5' })).toThrow(
      '--write-residuals: not with --limit (the error bands rest on every row)',
    );
    expect(() => check({ '--all': true, '--set': 'vtrain' })).toThrow('--set: not with --all');
    expect(() => check({ '--all': true, '--host-op-us': '18', '--decompose': true })).toThrow(
      '--host-op-us, --decompose: not with --all',
    );
    expect(check({ '--fit': true, '--json': true })).toMatchObject({ fit: true, json: true });
    expect(() => check({ '--fit': true, '--limit': '2', '--only': 'single' })).toThrow(
      '--fit: not with --only, --limit (it fits on the training subsets',
    );
  });
});
