import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

/** What a refused command line prints: one line on stderr, nothing on stdout, exit code 2. */
async function refused(...args: string[]): Promise<string> {
  const r = await cli('check-published', ...args);
  expect(r.code, r.err).toBe(2);
  expect(r.out).toBe('');
  return r.err;
}

describe('check-published: commander parses the options, with the messages they always had', () => {
  it('prints its --help, and the same for help check-published', async () => {
    const help = await cli('check-published', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: clustersim check-published \[options\]\n {7}npm run validate -- \[options\]\n/);
    expect(help.out).toContain('\n  --write-residuals with --all: write those residuals');
    expect(help.out).toContain('\n  --host-collective-us <us>\n                    vtrain set: host cost of one');
    expect(help.out).toMatch(/\n  -h, --help        this text\n\nExamples:\n(  .*\n)+$/);
    expect((await cli('check-published', '-h')).out).toBe(help.out);
    expect((await cli('help', 'check-published')).out).toBe(help.out);
  });

  it('checks the other options before printing the help', async () => {
    expect(await refused('--help', '--set', 'nope')).toBe(
      "clustersim: check-published: --set: unknown set 'nope'" +
        ' (vtrain | megatron-sc21 | megatron-sp22 | h200-kernels)\n',
    );
  });

  it.each([
    [['--frobnicate'], "Unknown option '--frobnicate'"],
    [['--lim', '3'], "Unknown option '--lim'"],
    [['-x'], "Unknown option '-x'"],
    [['extra'], "Unexpected argument 'extra'. This command does not take positional arguments"],
    [['--limit'], "Option '--limit <value>' argument missing"],
    [['--json=yes'], "Option '--json' does not take an argument"],
    [['--help=1'], "Option '-h, --help' does not take an argument"],
    [['--limit', '-1'], "--limit: expected a whole number ≥ 1, got '-1'"],
    [['--limit', 'abc'], "--limit: expected a whole number ≥ 1, got 'abc'"],
    [['--limit=1.5'], "--limit: expected a whole number ≥ 1, got '1.5'"],
    [['--set', 'nope'], "--set: unknown set 'nope' (vtrain | megatron-sc21 | megatron-sp22 | h200-kernels)"],
    [['--only', 'both'], "--only: 'both' is not a group (single | multi)"],
    [['--host-op-us', '-1', '--json'], "--host-op-us: expected µs > 0 (at most 10000), got '-1'"],
    [
      ['--vocab=peer', '--set', 'megatron-sp22'],
      '--vocab: for the vtrain set only; --set megatron-sp22 takes --limit and --json',
    ],
    [
      ['--fit', '--set=vtrain'],
      '--fit: not with --set (it fits on the training subsets, not on a set); it takes --json',
    ],
  ])('check-published %j: exit code 2, "%s"', async (args, message) => {
    expect(await refused(...args)).toBe(`clustersim: check-published: ${message}\n`);
  });

  it('takes an option for the value of the one before it as a forgotten value', async () => {
    expect(await refused('--set', '--json')).toBe(
      "clustersim: check-published: Option '--set' argument is ambiguous.\n" +
        "Did you forget to specify the option argument for '--set'?\n" +
        "To specify an option argument starting with a dash use '--set=-XYZ'.\n",
    );
  });

  it('reads --set, --limit and --json', async () => {
    const r = await cli('check-published', '--set', 'h200-kernels', '--limit', '1', '--json');
    expect(r.code, r.err).toBe(0);
    const json = JSON.parse(r.out) as { gpu: string; groups: { rows: unknown[] }[] };
    expect(json.gpu).toBe('h200-sxm-141gb');
    expect(json.groups.map((g) => g.rows.length)).toEqual([1, 1, 1, 1]);
  });
});

describe('the retired validate command', () => {
  it('says which of the two commands to run instead, with exit code 2', async () => {
    const r = await cli('validate', '--profile=p.json', '--max-error', '5');
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      "clustersim: 'validate' is now two commands: 'clustersim check-profile --profile p.json' runs held-out" +
        ' workloads against a calibrated profile (the one you asked for), and' +
        " 'clustersim check-published' (npm run validate) predicts published measured runs\n",
    );
    expect((await cli('validate')).err).not.toContain('the one you asked for');
  });
});
