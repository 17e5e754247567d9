import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import type { MeasuredCollectiveTable } from '../sim/collectives/measuredTable.js';
import { ScenarioError } from '../sim/errors.js';
import { parseCollectiveTable } from './ncclTestsTable.js';
import type { ScenarioInput } from './schema.js';

/** Parsed tables by absolute path and op/ranks: sweeps and validation resolve the same files many times. */
const cache = new Map<string, MeasuredCollectiveTable>();

/**
 * Reads the measured collective tables a scenario names (`comm.measured`), relative to the scenario's
 * folder. Each describes one op over `ranks` GPUs of one node, so `ranks` cannot exceed the node.
 */
export function resolveMeasuredCollectives(entries: ScenarioInput['comm']['measured'], baseDir: string, gpusPerNode: number): MeasuredCollectiveTable[] {
  return entries.map((e, i) => {
    const path = `comm.measured.${i}`;
    if (e.ranks > gpusPerNode) {
      throw new ScenarioError(`${path}.ranks`, `${e.ranks} GPUs do not fit in one node of ${gpusPerNode}: a measured table describes a collective inside one node`);
    }
    const full = resolvePath(baseDir, e.file);
    const key = `${full}|${e.op}|${e.ranks}`;
    let table = cache.get(key);
    if (!table) {
      let text: string;
      try {
        text = readFileSync(full, 'utf8');
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder, not a file' : code ?? String(err);
        throw new ScenarioError(`${path}.file`, `cannot read '${e.file}' (${full}): ${why}; a relative path is looked up from the scenario file's folder`);
      }
      try {
        table = parseCollectiveTable(text, e.op, e.ranks, e.file);
      } catch (err) {
        throw new ScenarioError(`${path}.file`, (err as Error).message);
      }
      cache.set(key, table);
    }
    return table;
  });
}
