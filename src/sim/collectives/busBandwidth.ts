import type { CollectiveOp } from './types.js';

/**
 * The factor nccl-tests multiplies algorithm bandwidth (size / time) by to get bus bandwidth, which
 * is comparable across GPU counts (nccl-tests doc/PERFORMANCE.md): 2(n−1)/n for all-reduce,
 * (n−1)/n for all-gather and reduce-scatter (size is the total buffer), 1 for broadcast and send/recv.
 */
export function busBandwidthFactor(op: CollectiveOp, ranks: number): number {
  if (ranks <= 1) return 1;
  switch (op) {
    case 'all_reduce':
      return (2 * (ranks - 1)) / ranks;
    case 'all_gather':
    case 'reduce_scatter':
      return (ranks - 1) / ranks;
    case 'broadcast':
    case 'send_recv':
      return 1;
  }
}
