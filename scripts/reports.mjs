#!/usr/bin/env node
// Regenerates the example reports committed under reports/ (SVG timelines and charts, HTML reports,
// a small Perfetto trace, scaling CSVs) for the headline scenarios, through the CLI itself, so that
// they always show what the current code produces. Run with `npm run reports` (it builds first).
// Runs are seeded, so unchanged code gives byte-identical files.
import { mkdirSync, statSync } from 'node:fs';
import { runCli } from '../dist/cli/main.js';
import { OUT, REPORT_JOBS as jobs } from './reportJobs.mjs';

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
