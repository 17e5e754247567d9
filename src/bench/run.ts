import { execFileSync } from 'node:child_process';
import { totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { BENCH_CASES, type CaseResult } from './cases.js';

/**
 * `npm run bench`: runs each case in a fresh process several times (so peak memory is per case) and
 * prints the median, minimum and maximum. Options: `--repeat N` (default 5), `--only a,b`, `--json`.
 */
const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const repeat = Number(opt('--repeat') ?? 5);
const only = opt('--only')?.split(',');
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

const rows: Row[] = [];
const failed = new Map<string, string>();
for (const [name, c] of Object.entries(BENCH_CASES)) {
  if (only && !only.includes(name)) continue;
  const runs: (CaseResult & { maxRssBytes: number })[] = [];
  for (let i = 0; i < repeat; i++) {
    if (process.stderr.isTTY) process.stderr.write(`\r${name}: run ${i + 1}/${repeat}   `);
    // Large cases need more than Node's default heap, as the CLI gives itself (bin/clustersim.js).
    const heapMiB = Math.min(32 * 1024, Math.floor((totalmem() * 0.75) / 2 ** 20));
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
}
