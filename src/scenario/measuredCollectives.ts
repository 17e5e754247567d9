import { statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { busBandwidthFactor } from '../sim/collectives/busBandwidth.js';
import type { MeasuredCollectiveTable } from '../sim/collectives/measuredTable.js';
import type { NodeSpec } from '../sim/hardware/types.js';
import type { CollectiveOp } from '../sim/collectives/types.js';
import { fileErrorReason } from '../fileErrors.js';
import { InvalidScenarioError, type Problem } from './errors.js';
import { parseCollectiveTable } from './ncclTestsTable.js';
import type { ScenarioInput } from './schema.js';
import { readInputText } from '../inputFile.js';

/**
 * Parsed points by absolute path, modification time and size, op and ranks: sweeps and validation resolve the
 * same files many times; an edited file is read again.
 */
const cache = new Map<string, MeasuredCollectiveTable['points']>();

/** A measured bus bandwidth this far above the node's links is a unit mistake, not a measurement. */
const IMPLAUSIBLE_BUS_FACTOR = 1.5;

/**
 * Reads the measured collective tables a scenario names (`comm.measured`), relative to the scenario's
 * folder. A table applies to groups of its size that lie in one node; on a node with fewer GPUs it simply
 * never applies (so scale sweeps can go below a node). Every bad entry is reported, each at its path.
 */
export function resolveMeasuredCollectives(
  entries: ScenarioInput['comm']['measured'],
  baseDir: string,
  node: NodeSpec,
  source: string,
): MeasuredCollectiveTable[] {
  const problems: Problem[] = [];
  const tables: MeasuredCollectiveTable[] = [];
  entries.forEach((e, i) => {
    const path = `comm.measured.${i}.file`;
    const full = resolvePath(baseDir, e.file);
    let points: MeasuredCollectiveTable['points'] | undefined;
    try {
      const st = statSync(full);
      const key = `${full}|${st.mtimeMs}|${st.size}|${e.op}|${e.ranks}`;
      points = cache.get(key);
      if (!points) {
        points = parseCollectiveTable(readInputText(full), e.op, e.ranks, e.file).points;
        cache.set(key, points);
      }
    } catch (err) {
      const message = (err as NodeJS.ErrnoException).code
        ? `cannot read '${e.file}' (${full}): ${fileErrorReason(err)}; ` +
          "a relative path is looked up from the scenario file's folder"
        : (err as Error).message;
      problems.push({ path, message });
      return;
    }
    const implausible = implausibleBandwidth(points, e.op, e.ranks, node);
    if (implausible) problems.push({ path, message: `'${e.file}': ${implausible}` });
    else tables.push({ op: e.op, ranks: e.ranks, points, source: e.file });
  });
  if (problems.length > 0) throw new InvalidScenarioError(source, problems);
  return tables;
}

/**
 * Why a table cannot be a measurement on this node (bus bandwidth far above its links), or undefined: the check that
 * `comm.measured` and `collective --compare` both make.
 */
export function implausibleBandwidth(
  points: readonly { bytes: number; timeNs: number }[],
  op: CollectiveOp,
  ranks: number,
  node: NodeSpec,
): string | undefined {
  const linkGBps = node.intra === 'pcie' ? node.pcieBandwidthGBps : node.nvlinkBandwidthGBps;
  for (const p of points) {
    const busGBps = (p.bytes / p.timeNs) * busBandwidthFactor(op, ranks);
    if (busGBps > IMPLAUSIBLE_BUS_FACTOR * linkGBps) {
      return (
        `${p.bytes} B in ${p.timeNs} ns is ${busGBps.toFixed(0)} GB/s of bus bandwidth, ` +
        `more than ${IMPLAUSIBLE_BUS_FACTOR}× the node's ${linkGBps} GB/s links; are the times in µs but labelled ns?`
      );
    }
  }
  return undefined;
}
