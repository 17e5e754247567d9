import { execFileSync } from 'node:child_process';
import { totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { BENCH_CASES, type CaseResult } from './cases.js';
import { GROWTH_CASES, logLogSlope, type GrowthSeries } from './growth.js';

/**
 * `npm run bench`: runs each case in a fresh process several times (so peak memory is per case) and
 * prints the median, minimum and maximum. Options: `--repeat N` (default 5), `--only a,b`, `--growth`, `--json`.
 */
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(`usage: npm run bench -- [--repeat N] [--only case,case] [--growth] [--json]

Runs each case in a fresh process N times (default 5) and prints median, min, max and peak RSS.
  --only      run these cases: ${Object.keys(BENCH_CASES).filter((n) => !(n in GROWTH_CASES)).join(', ')}
  --growth    run the growth cases (${Object.keys(GROWTH_CASES).join(', ')})
              and print how wall time and peak memory grow with GPUs and micro-batches (exponent b of x^b)
  --json      print the rows as JSON

examples:
  npm run bench -- --repeat 5 --only hold-1e3,ring-step-256
  npm run bench -- --repeat 1 --growth
`);
  process.exit(0);
}
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const repeat = Number(opt('--repeat') ?? 5);
const growth = args.includes('--growth');
const only = growth ? Object.keys(GROWTH_CASES) : opt('--only')?.split(',');
const unknown = only?.filter((n) => !Object.hasOwn(BENCH_CASES, n)) ?? [];
if (unknown.length > 0) {
  process.stderr.write(`bench: unknown case ${unknown.join(', ')}; run with --help for the list\n`);
  process.exit(2);
}
const json = args.includes('--json');
const caseScript = fileURLToPath(new URL('./case.js', import.meta.url));

type Row = { name: string; title: string; unit: string; median: number; min: number; max: number; events?: number; maxRssMiB: number };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function fmt(v: number, unit: string): string {
  if (unit === 'events/s') return `${(v / 1e6).toFixed(2)} M`;
  return v >= 1 ? v.toFixed(2) : v.toFixed(3);
}

// Large cases need more than Node's default heap, as the CLI gives itself (bin/clustersim.js).
const heapMiB = Math.min(32 * 1024, Math.floor((totalmem() * 0.75) / 2 ** 20));
const rows: Row[] = [];
const failed = new Map<string, string>();
for (const [name, c] of Object.entries(BENCH_CASES)) {
  if (only && !only.includes(name)) continue;
  const runs: (CaseResult & { maxRssBytes: number })[] = [];
  for (let i = 0; i < repeat; i++) {
    if (process.stderr.isTTY) process.stderr.write(`\r${name}: run ${i + 1}/${repeat}   `);
    try {
      runs.push(JSON.parse(execFileSync(process.execPath, [`--max-old-space-size=${heapMiB}`, caseScript, name], { encoding: 'utf8', maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'pipe'] })));
    } catch (err) {
      const text = String((err as { stderr?: string }).stderr ?? err);
      failed.set(name, /heap out of memory/.test(text) ? 'ran out of memory' : text.split('\n').find((l) => l.trim() !== '') ?? 'failed');
      break;
    }
  }
  if (runs.length === 0) continue;
  const values = runs.map((r) => r.value);
  rows.push({ name, title: c.title, unit: runs[0].unit, median: median(values), min: Math.min(...values), max: Math.max(...values), events: runs[0].events, maxRssMiB: median(runs.map((r) => r.maxRssBytes)) / 2 ** 20 });
}
if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
if (json) {
  process.stdout.write(JSON.stringify({ repeat, node: process.version, rows, failed: Object.fromEntries(failed) }, null, 2) + '\n');
} else {
  const header = ['case', 'median', 'min', 'max', 'unit', 'events', 'peak RSS MiB'];
  const body = rows.map((r) => [r.title, fmt(r.median, r.unit), fmt(r.min, r.unit), fmt(r.max, r.unit), r.unit, r.events?.toLocaleString('en-US') ?? '', r.maxRssMiB.toFixed(0)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  process.stdout.write(`clustersim bench (${repeat} runs per case, node ${process.version})\n${line(header)}\n${body.map(line).join('\n')}\n`);
  for (const [name, why] of failed) process.stdout.write(`${BENCH_CASES[name].title}: ${why}\n`);
  if (growth) process.stdout.write(growthLines(rows));
}

/** `wall ∝ x^b, peak RSS ∝ x^b` for each growth series that has at least two measured points. */
function growthLines(measured: readonly Row[]): string {
  const label: Record<GrowthSeries, string> = { gpus: 'GPUs', microBatches: 'micro-batches per replica' };
  let text = '';
  for (const series of ['gpus', 'microBatches'] as const) {
    const pts = measured.flatMap((r) => (GROWTH_CASES[r.name]?.series === series ? [{ x: GROWTH_CASES[r.name].x, wall: r.median, rss: r.maxRssMiB }] : []));
    if (pts.length < 2) continue;
    const wallB = logLogSlope(pts.map((p) => ({ x: p.x, y: p.wall })));
    const rssB = logLogSlope(pts.map((p) => ({ x: p.x, y: p.rss })));
    text += `growth with ${label[series]} (${pts[0].x}..${pts[pts.length - 1].x}): wall ∝ x^${wallB.toFixed(2)}, peak RSS ∝ x^${rssB.toFixed(2)}\n`;
  }
  return text;
}
