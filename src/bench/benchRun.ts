import { execFileSync } from 'node:child_process';
import { totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { BENCH_CASES, type CaseResult } from './cases.js';
import { GROWTH_CASES, logLogSlope, type GrowthSeries } from './growth.js';

/** What `clustersim bench` (and `npm run bench`) was asked to run. */
export interface BenchOptions {
  /** Runs per case (each in a fresh process). */
  repeat: number;
  /** The cases to run (undefined: every case that is not a growth case). */
  only?: string[];
  /** Run the growth cases and print how wall time and memory grow. */
  growth: boolean;
  json: boolean;
}

/** The cases `--only` may name, and the growth cases `--growth` runs. */
export const BENCH_CASE_NAMES = Object.keys(BENCH_CASES).filter((n) => !(n in GROWTH_CASES));
export const GROWTH_CASE_NAMES = Object.keys(GROWTH_CASES);

/** Why these case names cannot run (undefined: they can). */
export function unknownBenchCases(names: readonly string[]): string | undefined {
  const unknown = names.filter((n) => !Object.hasOwn(BENCH_CASES, n));
  return unknown.length === 0 ? undefined : `unknown case ${unknown.join(', ')} (${BENCH_CASE_NAMES.join(', ')})`;
}

type Row = {
  name: string;
  title: string;
  unit: string;
  median: number;
  min: number;
  max: number;
  events?: number;
  maxRssMiB: number;
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function fmt(v: number, unit: string): string {
  if (unit === 'events/s') return `${(v / 1e6).toFixed(2)} M`;
  return v >= 1 ? v.toFixed(2) : v.toFixed(3);
}

/**
 * Runs each chosen case in a fresh process `repeat` times (so peak memory is per case) and writes the median,
 * minimum, maximum and peak RSS with `out`; `progress` gets a line per run (for a terminal).
 */
export function runBench(options: BenchOptions, out: (text: string) => void, progress?: (text: string) => void): void {
  const { repeat, growth, json } = options;
  const only = growth ? Object.keys(GROWTH_CASES) : options.only;
  const { rows, failed } = measureCases(repeat, only, progress);
  if (json) {
    out(JSON.stringify({ repeat, node: process.version, rows, failed: Object.fromEntries(failed) }, null, 2) + '\n');
    return;
  }
  out(benchTable(rows, repeat));
  for (const [name, why] of failed) out(`${BENCH_CASES[name].title}: ${why}\n`);
  if (growth) out(growthLines(rows));
}

/** Each case's runs, each in its own process; a case that fails is reported with why, and not retried. */
function measureCases(repeat: number, only: string[] | undefined, progress?: (text: string) => void) {
  const caseScript = fileURLToPath(new URL('./case.js', import.meta.url));
  // Large cases need more than Node's default heap, as the CLI gives itself (bin/clustersim.js).
  const heapMiB = Math.min(32 * 1024, Math.floor((totalmem() * 0.75) / 2 ** 20));
  const rows: Row[] = [];
  const failed = new Map<string, string>();
  for (const [name, c] of Object.entries(BENCH_CASES)) {
    if (only && !only.includes(name)) continue;
    const runs: (CaseResult & { maxRssBytes: number })[] = [];
    for (let i = 0; i < repeat; i++) {
      progress?.(`${name}: run ${i + 1}/${repeat}`);
      try {
        runs.push(
          JSON.parse(
            execFileSync(process.execPath, [`--max-old-space-size=${heapMiB}`, caseScript, name], {
              encoding: 'utf8',
              maxBuffer: 1 << 20,
              stdio: ['ignore', 'pipe', 'pipe'],
            }),
          ),
        );
      } catch (err) {
        const text = String((err as { stderr?: string }).stderr ?? err);
        failed.set(
          name,
          /heap out of memory/.test(text)
            ? 'ran out of memory'
            : (text.split('\n').find((l) => l.trim() !== '') ?? 'failed'),
        );
        break;
      }
    }
    if (runs.length === 0) continue;
    const values = runs.map((r) => r.value);
    rows.push({
      name,
      title: c.title,
      unit: runs[0].unit,
      median: median(values),
      min: Math.min(...values),
      max: Math.max(...values),
      events: runs[0].events,
      maxRssMiB: median(runs.map((r) => r.maxRssBytes)) / 2 ** 20,
    });
  }
  return { rows, failed };
}

/** The text table of the measured cases. */
function benchTable(rows: readonly Row[], repeat: number): string {
  const header = ['case', 'median', 'min', 'max', 'unit', 'events', 'peak RSS MiB'];
  const body = rows.map((r) => [
    r.title,
    fmt(r.median, r.unit),
    fmt(r.min, r.unit),
    fmt(r.max, r.unit),
    r.unit,
    r.events?.toLocaleString('en-US') ?? '',
    r.maxRssMiB.toFixed(0),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return (
    `clustersim bench (${repeat} runs per case, ` +
    `node ${process.version})\n${line(header)}\n${body.map(line).join('\n')}\n`
  );
}

/** `wall ∝ x^b, peak RSS ∝ x^b` for each growth series that has at least two measured points. */
function growthLines(measured: readonly Row[]): string {
  const label: Record<GrowthSeries, string> = { gpus: 'GPUs', microBatches: 'micro-batches per replica' };
  let text = '';
  for (const series of ['gpus', 'microBatches'] as const) {
    const pts = measured.flatMap((r) =>
      GROWTH_CASES[r.name]?.series === series ? [{ x: GROWTH_CASES[r.name].x, wall: r.median, rss: r.maxRssMiB }] : [],
    );
    if (pts.length < 2) continue;
    const wallB = logLogSlope(pts.map((p) => ({ x: p.x, y: p.wall })));
    const rssB = logLogSlope(pts.map((p) => ({ x: p.x, y: p.rss })));
    text +=
      `growth with ${label[series]} (${pts[0].x}..${pts[pts.length - 1].x}): ` +
      `wall ∝ x^${wallB.toFixed(2)}, peak RSS ∝ x^${rssB.toFixed(2)}\n`;
  }
  return text;
}
