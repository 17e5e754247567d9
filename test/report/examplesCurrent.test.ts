import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
// A plain JavaScript module of the repo's scripts, shared with `npm run reports`.
import { REPORT_JOBS } from '../../scripts/reportJobs.mjs';

/**
 * The example reports under reports/ that the README shows are what the current code produces (`npm run reports`
 * regenerates them): the scaling jobs' CSVs, which hold every figure of their charts, are simulated again with the
 * same arguments and compared.
 */
const csvJobs = (REPORT_JOBS as string[][])
  .filter((args) => args.includes('--csv'))
  .map((args) => {
    const at = args.indexOf('--csv');
    // Only the CSV is written again: the job's other files are left out.
    const kept = args.filter((_, i) => !(['--svg', '--report', '--csv'].includes(args[i]) || ['--svg', '--report', '--csv'].includes(args[i - 1])));
    return [basename(args[at + 1]), args[at + 1], kept] as const;
  });

describe('the committed example reports', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-examples-'));
  it('include scaling CSVs to check', () => expect(csvJobs.length).toBeGreaterThan(0));
  it.each(csvJobs)('%s is current (run npm run reports after a model change)', async (name, committed, args) => {
    const csv = join(dir, name);
    const r = await cli(...args, '--jobs', '1', '--csv', csv);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(csv, 'utf8')).toBe(readFileSync(committed, 'utf8'));
  }, 120_000);
});
