import { describe, expect, it } from 'vitest';
import { parseValidateArgs } from '../../src/validation/validateArgs.js';

describe('npm run validate options', () => {
  it('defaults to the whole vTrain set as text', () => {
    expect(parseValidateArgs([])).toEqual({ hostOpUs: undefined, hostCollectiveUs: undefined, vocab: 'peer', set: 'vtrain', only: undefined, limit: Infinity, json: false, decompose: false, all: false, writeResiduals: false, fit: false, help: false });
  });

  it('reads each option', () => {
    expect(parseValidateArgs(['--set', 'megatron-sc21', '--limit', '3', '--json'])).toMatchObject({ set: 'megatron-sc21', limit: 3, json: true });
    expect(parseValidateArgs(['--only', 'single', '--decompose'])).toMatchObject({ only: 'single', decompose: true });
    expect(parseValidateArgs(['-h']).help).toBe(true);
    expect(parseValidateArgs(['--host-op-us', '18']).hostOpUs).toBe(18);
    expect(parseValidateArgs(['--host-collective-us', '13.4']).hostCollectiveUs).toBe(13.4);
    expect(parseValidateArgs(['--vocab', 'megatron-padded']).vocab).toBe('megatron-padded');
  });

  it('says what is wrong and what is allowed', () => {
    expect(() => parseValidateArgs(['--set', 'mlperf'])).toThrow("--set: unknown set 'mlperf' (vtrain | megatron-sc21 | megatron-sp22 | h200-kernels)");
    expect(parseValidateArgs(['--set', 'megatron-sp22']).set).toBe('megatron-sp22');
    expect(() => parseValidateArgs(['--only', 'both'])).toThrow("--only: 'both' is not a group (single | multi)");
    expect(() => parseValidateArgs(['--limit', '0'])).toThrow("--limit: expected a whole number ≥ 1, got '0'");
    expect(() => parseValidateArgs(['--frobnicate'])).toThrow(/Unknown option '--frobnicate'/);
    expect(() => parseValidateArgs(['--vocab', 'padded'])).toThrow("--vocab: unknown split 'padded' (peer | megatron-padded)");
    expect(() => parseValidateArgs(['--host-op-us', '0'])).toThrow("--host-op-us: expected µs > 0 (at most 10000), got '0'");
    expect(() => parseValidateArgs(['--host-collective-us', 'x'])).toThrow("--host-collective-us: expected µs > 0 (at most 100000), got 'x'");
  });

  it('refuses the vtrain set\'s options with another set instead of ignoring them', () => {
    expect(() => parseValidateArgs(['--set', 'megatron-sc21', '--only', 'single'])).toThrow('--only: for the vtrain set only; --set megatron-sc21 takes --limit and --json');
    expect(() => parseValidateArgs(['--set', 'h200-kernels', '--host-op-us', '18', '--decompose'])).toThrow('--host-op-us, --decompose: for the vtrain set only');
    expect(() => parseValidateArgs(['--set', 'megatron-sp22', '--vocab', 'peer'])).toThrow(/--vocab: for the vtrain set only/);
    expect(parseValidateArgs(['--vocab', 'megatron-padded']).vocab).toBe('megatron-padded');
  });

  it('refuses a negative value with the option\'s own message, not the parser\'s "ambiguous"', () => {
    expect(() => parseValidateArgs(['--limit', '-3'])).toThrow("--limit: expected a whole number ≥ 1, got '-3'");
    expect(() => parseValidateArgs(['--host-op-us', '-1', '--json'])).toThrow("--host-op-us: expected µs > 0 (at most 10000), got '-1'");
  });

  it('runs every set with --all and writes the residuals only from a whole run', () => {
    expect(parseValidateArgs(['--all', '--write-residuals'])).toMatchObject({ all: true, writeResiduals: true, limit: Infinity });
    expect(parseValidateArgs(['--all', '--limit', '2', '--json'])).toMatchObject({ all: true, limit: 2, json: true });
    expect(() => parseValidateArgs(['--write-residuals'])).toThrow('--write-residuals: only with --all');
    expect(() => parseValidateArgs(['--all', '--write-residuals', '--limit', '5'])).toThrow('--write-residuals: not with --limit (the error bands rest on every row)');
    expect(() => parseValidateArgs(['--all', '--set', 'vtrain'])).toThrow('--set: not with --all');
    expect(() => parseValidateArgs(['--all', '--host-op-us', '18', '--decompose'])).toThrow('--host-op-us, --decompose: not with --all');
    expect(parseValidateArgs(['--fit', '--json'])).toMatchObject({ fit: true, json: true });
    expect(() => parseValidateArgs(['--fit', '--limit', '2', '--only', 'single'])).toThrow('--fit: not with --only, --limit (it fits on the training subsets');
  });
});
