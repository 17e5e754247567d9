#!/usr/bin/env node
// Regenerates the example reports committed under reports/ (SVG timelines and charts, HTML reports,
// a small Perfetto trace, scaling CSVs) for the headline scenarios, through the CLI itself, so that
// they always show what the current code produces. Run with `npm run reports` (it builds first).
// Runs are seeded, so unchanged code gives byte-identical files.
import { mkdirSync, statSync } from 'node:fs';
import { runCli } from '../dist/cli/main.js';

const OUT = 'reports';
const BERT = 'scenarios/bert-large-ddp-2node.yaml';
const LLAMA = 'scenarios/llama2-7b-ddp-16node.yaml';
const LLAMA_ROCE = 'reports/inputs/llama2-7b-ddp-16node-roce100.yaml';

/** Each job is one CLI call; its files are listed after it with their sizes. */
const jobs = [
  // Every rank simulated (by default one data-parallel replica stands for all), to show both nodes.
  ['simulate', BERT, '--set', 'simulation.fidelity=full', '--timeline', `${OUT}/bert-large-ddp-2node.timeline.svg`, '--memory-chart', `${OUT}/bert-large-ddp-2node.memory.svg`,
    '--report', `${OUT}/bert-large-ddp-2node.html`, '--trace', `${OUT}/bert-large-ddp-2node.trace.json`, '--ranks', '0,8'],
  ['simulate', LLAMA, '--timeline', `${OUT}/llama2-7b-ddp-16node.timeline.svg`, '--memory-chart', `${OUT}/llama2-7b-ddp-16node.memory.svg`,
    '--report', `${OUT}/llama2-7b-ddp-16node.html`],
  ['scale', BERT, '--gpus', '1..32', '--mode', 'strong', '--svg', `${OUT}/scale-bert-large-strong.svg`, '--csv', `${OUT}/scale-bert-large-strong.csv`],
  ['scale', LLAMA, '--compare', LLAMA_ROCE, '--gpus', '8..1024', '--mode', 'weak', '--svg', `${OUT}/scale-llama2-7b-ib-vs-roce-weak.svg`,
    '--csv', `${OUT}/scale-llama2-7b-ib-vs-roce-weak.csv`, '--report', `${OUT}/scale-llama2-7b-ib-vs-roce-weak.html`],
];

mkdirSync(OUT, { recursive: true });
const quiet = { out: () => {}, err: (s) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`) };
for (const args of jobs) {
  process.stderr.write(`clustersim ${args.join(' ')}\n`);
  const code = await runCli(['node', 'clustersim', ...args], quiet);
  if (code !== 0) {
    process.stderr.write(`reports: 'clustersim ${args.join(' ')}' failed with exit code ${code}\n`);
    process.exit(code);
  }
}
const files = jobs.flatMap((a) => a.filter((x) => x.startsWith(`${OUT}/`) && !x.startsWith(`${OUT}/inputs/`)));
for (const f of files) process.stderr.write(`${String(statSync(f).size).padStart(9)} B  ${f}\n`);
