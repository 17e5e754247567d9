import type { Topology } from '../network/types.js';
import { busBandwidthFactor } from './busBandwidth.js';
import { CollectiveService, type CollectiveConfig } from './collectiveService.js';
import type { CollectiveOp } from './types.js';

/** One row of a collective sweep, as nccl-tests reports it. */
export interface SweepRow {
  bytes: number;
  timeUs: number;
  algbwGBps: number;
  busbwGBps: number;
  algorithm: string;
  protocol: string;
}

/** Sizes from `minBytes` to `maxBytes`, multiplying by `factor` (nccl-tests `-b -e -f`). */
export function sweepSizes(minBytes: number, maxBytes: number, factor = 2): number[] {
  const sizes: number[] = [];
  for (let b = minBytes; b <= maxBytes; b *= factor) sizes.push(b);
  return sizes;
}

/**
 * Simulates one collective per size on the idle cluster, flow by flow, and reports time and
 * bandwidths the way nccl-tests does (algbw = size / time; busbw = algbw × the op's factor).
 */
export function collectiveSweep(
  topology: Topology,
  op: CollectiveOp,
  group: readonly number[],
  sizes: readonly number[],
  config: CollectiveConfig,
): SweepRow[] {
  const service = new CollectiveService(topology, config);
  return sizes.map((bytes) => {
    const choice = service.choose(op, group, bytes);
    const ns = service.simulateIdleNs(op, group, bytes, choice);
    const algbwGBps = bytes / ns;
    return {
      bytes,
      timeUs: ns / 1e3,
      algbwGBps,
      busbwGBps: algbwGBps * busBandwidthFactor(op, group.length),
      algorithm: choice.algorithm,
      protocol: choice.protocol,
    };
  });
}
