import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { parseSvg } from './fixtures.js';

const BERT = 'scenarios/bert-large-ddp-2node.yaml';
/** Every rank simulated, so that all 16 have their own work (by default one replica stands for all). */
const FULL = ['--set', 'simulation.fidelity=full'];

describe('clustersim simulate --timeline / --report / --trace', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-sim-'));

  it('writes the files and leaves stdout and the JSON as they were', async () => {
    const plain = await cli('simulate', BERT, '--json', ...FULL);
    const [svg, html, trace] = ['t.svg', 'r.html', 'x.json'].map((f) => join(dir, f));
    const r = await cli(
      'simulate',
      BERT,
      '--json',
      ...FULL,
      '--timeline',
      svg,
      '--report',
      html,
      '--trace',
      trace,
      '--ranks',
      '0-2,9',
    );
    expect(r.code).toBe(0);
    expect(r.out).toBe(plain.out);
    for (const f of [svg, html, trace]) expect(existsSync(f)).toBe(true);
    const root = parseSvg(readFileSync(svg, 'utf8'));
    expect(root.getAttribute('data-ranks')).toBe('0,1,2,9');
    expect(root.querySelectorAll('g.lane').length).toBe(4 * 2);
    const events = JSON.parse(readFileSync(trace, 'utf8')).traceEvents as { pid: number }[];
    expect(new Set(events.map((e) => e.pid - 1))).toEqual(new Set([0, 1, 2, 9]));
  });

  it('makes a self-contained HTML report: summary, timeline and memory chart, nothing fetched', async () => {
    const html = join(dir, 'self.html');
    expect((await cli('simulate', BERT, '--report', html)).code).toBe(0);
    const page = readFileSync(html, 'utf8');
    expect(page).toMatch(/^<!DOCTYPE html>/);
    for (const s of ['step time', 'MFU', 'class="timeline"', 'class="memory-chart"', "default-src 'none'"])
      expect(page).toContain(s);
    expect(page).not.toMatch(/<script|<link|src="http|href="http|@import/);
    // What bounds the step, as the text summary names it.
    const text = (await cli('simulate', BERT, '--alternatives', '0')).out;
    const bound = /bottleneck: ([^\n]+)/.exec(text)![1];
    expect(page).toContain(`<td>bottleneck</td><td>${bound}</td>`);
  });

  it(
    'shows the alternatives simulate ran as a "What to try" ' +
      'table in the HTML report, and none with --alternatives 0',
    async () => {
      const html = join(dir, 'try.html');
      const r = await cli('simulate', BERT, '--report', html, '--json');
      const first = JSON.parse(r.out).alternatives[0] as { label: string; sets: string[] };
      const page = readFileSync(html, 'utf8');
      expect(page).toContain('<h2>What to try</h2>');
      expect(page).toContain(`<td>${first.label}</td>`);
      expect(page).toContain(first.sets.map((s) => `--set ${s}`).join(' '));
      const none = join(dir, 'none.html');
      await cli('simulate', BERT, '--alternatives', '0', '--report', none);
      expect(readFileSync(none, 'utf8')).not.toContain('What to try');
    },
  );

  it("carries the simulator's notes into the HTML report (TP over PCIe)", async () => {
    const html = join(dir, 'pcie.html');
    expect(
      (await cli('simulate', 'scenarios/llama2-13b-tp8-pcie.yaml', '--alternatives', '0', '--report', html)).code,
    ).toBe(0);
    expect(readFileSync(html, 'utf8')).toMatch(/<td>note<\/td><td>tensor parallelism over PCIe/);
  });

  it(
    "says in the HTML report's parallelism line what the text says: " + 'ZeRO with CPU offload and the recompute',
    async () => {
      const html = join(dir, 'split.html');
      const sets = ['parallel.zero=3', 'parallel.offload=cpu', 'parallel.recompute=full'].flatMap((s) => ['--set', s]);
      const r = await cli(
        'simulate',
        'scenarios/llama2-7b-zero3-nvlink.yaml',
        '--alternatives',
        '0',
        '--report',
        html,
        ...sets,
      );
      expect(r.code, r.err).toBe(0);
      expect(r.out).toMatch(/ZeRO-3 \+ CPU offload, full recompute/);
      expect(readFileSync(html, 'utf8')).toMatch(
        /<td>parallelism<\/td><td>tp 1 × pp 1 × dp 8, ZeRO-3 \+ CPU offload, full recompute<\/td>/,
      );
    },
  );

  it('defaults to rank 0 and a rank on the last node, and to all ranks in the trace', async () => {
    const [svg, trace] = ['d.svg', 'd.json'].map((f) => join(dir, f));
    expect((await cli('simulate', BERT, ...FULL, '--timeline', svg, '--trace', trace)).code).toBe(0);
    expect(parseSvg(readFileSync(svg, 'utf8')).getAttribute('data-ranks')).toBe('0,8');
    const events = JSON.parse(readFileSync(trace, 'utf8')).traceEvents as { pid: number }[];
    expect(new Set(events.map((e) => e.pid)).size).toBe(16);
  });

  it('takes --streams for the timeline lanes', async () => {
    const svg = join(dir, 's.svg');
    expect((await cli('simulate', BERT, ...FULL, '--timeline', svg, '--ranks', '3', '--streams', 'comm')).code).toBe(0);
    const lanes = [...parseSvg(readFileSync(svg, 'utf8')).querySelectorAll('g.lane')].map((g) =>
      g.getAttribute('data-stream'),
    );
    expect(lanes).toEqual(['comm']);
    // A stream with no work in this run (BERT runs no tensor parallelism) is drawn, empty, and warned of.
    const idle = await cli('simulate', BERT, ...FULL, '--timeline', svg, '--ranks', '3', '--streams', 'comm,tp');
    expect(idle.code).toBe(0);
    expect(idle.err).toMatch(
      /warning: --streams: tp has no work in this run, so its lanes are empty \(streams with work: compute, comm\)/,
    );
  });

  it('rejects ranks that do not exist and too many ranks for a timeline, with exit code 2', async () => {
    const bad = await cli('simulate', BERT, ...FULL, '--timeline', join(dir, 'b.svg'), '--ranks', '0-16');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--ranks: rank 16 does not exist');
    const many = await cli(
      'simulate',
      'scenarios/llama2-7b-ddp-16node.yaml',
      ...FULL,
      '--timeline',
      join(dir, 'm.svg'),
      '--ranks',
      '0-127',
    );
    expect(many.code).toBe(2);
    expect(many.err).toMatch(/at most 64 ranks/);
    const streams = await cli('simulate', BERT, '--timeline', join(dir, 'c.svg'), '--streams', 'nvlink');
    expect(streams.code).toBe(2);
    expect(streams.err).toContain("--streams: unknown stream 'nvlink'");
    for (const r of [bad, many, streams]) expect(r.out).toBe('');
  });

  it('refuses --ranks and --streams without an output they choose for (exit 2, nothing simulated)', async () => {
    const ranks = await cli('simulate', BERT, '--ranks', '0');
    expect([ranks.code, ranks.out]).toEqual([2, '']);
    expect(ranks.err).toContain('--ranks: picks what --timeline, --report or --trace show; give one of them too');
    const streams = await cli(
      'simulate',
      BERT,
      '--streams',
      'compute',
      '--trace',
      join(mkdtempSync(join(tmpdir(), 'cs-')), 't.json'),
    );
    expect([streams.code, streams.out]).toEqual([2, '']);
    expect(streams.err).toContain('--streams: picks what --timeline or --report show; give one of them too');
  });

  it('refuses a rank that does not exist before simulating: no summary on stdout, no file written', async () => {
    const r = await cli('simulate', BERT, '--timeline', join(dir, 'e.svg'), '--ranks', '0,99');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe('clustersim: --ranks: rank 99 does not exist: this run has ranks 0-15\n');
    expect(existsSync(join(dir, 'e.svg'))).toBe(false);
  });

  it('shows the simulated ranks only, and says how to see the others, when ranks are mirrored', async () => {
    const [svg, trace] = ['m.svg', 'm.json'].map((f) => join(dir, f));
    const r = await cli('simulate', BERT, '--timeline', svg, '--trace', trace);
    expect(r.code).toBe(0);
    const root = parseSvg(readFileSync(svg, 'utf8'));
    expect(root.getAttribute('data-ranks')).toBe('0');
    expect(root.querySelector('.note')!.textContent).toContain('Simulated ranks: 0; the others mirror them.');
    const events = JSON.parse(readFileSync(trace, 'utf8')).traceEvents as { pid: number }[];
    expect(new Set(events.map((e) => e.pid - 1))).toEqual(new Set([0]));
    const bad = await cli('simulate', BERT, '--timeline', svg, '--ranks', '0,8');
    expect(bad.code).toBe(2);
    expect(bad.out).toBe('');
    expect(bad.err).toContain(
      '--ranks: rank 8 was not simulated: this run simulated ranks 0, ' +
        'and the others mirror them; --set simulation.fidelity=full simulates every rank',
    );
  });
});
