import { BENCH_CASES } from './cases.js';

/** Child process entry: runs one case and prints its result with the process's peak memory as JSON. */
const name = process.argv[2];
const c = BENCH_CASES[name];
if (!c) {
  process.stderr.write(`unknown bench case '${name}'; expected one of ${Object.keys(BENCH_CASES).join(', ')}\n`);
  process.exit(2);
}
const result = c.run();
process.stdout.write(JSON.stringify({ ...result, maxRssBytes: process.resourceUsage().maxRSS * 1024 }) + '\n');
