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
const FILE_OPTIONS = ['--svg', '--report', '--csv'];
/** A job's arguments without its output files (each option and the path after it): only the CSV is written again. */
const withoutFiles = (args: string[]) =>
  args.filter((a, i) => !FILE_OPTIONS.includes(a) && !FILE_OPTIONS.includes(args[i - 1]));
const csvJobs = (REPORT_JOBS as string[][])
  .filter((args) => args.includes('--csv'))
  .map((args) => {
    const committed = args[args.indexOf('--csv') + 1];
    return [basename(committed), committed, withoutFiles(args)] as const;
  });

describe('the committed example reports', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-examples-'));
  it('include scaling CSVs to check', () => expect(csvJobs.length).toBeGreaterThan(0));
  it.each(csvJobs)(
    '%s is current (run npm run reports after a model change)',
    async (name, committed, args) => {
      const csv = join(dir, name);
      const r = await cli(...args, '--jobs', '1', '--csv', csv);
      expect(r.code, r.err).toBe(0);
      expect(readFileSync(csv, 'utf8')).toBe(readFileSync(committed, 'utf8'));
    },
    120_000,
  );
});
