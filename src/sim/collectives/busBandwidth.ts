import type { CollectiveOp } from './types.js';

/**
 * The factor nccl-tests multiplies algorithm bandwidth (size / time) by to get bus bandwidth, which
 * is comparable across GPU counts (nccl-tests doc/PERFORMANCE.md): 2(n−1)/n for all-reduce,
 * (n−1)/n for all-gather, reduce-scatter (size is the total buffer) and all-to-all (size is each rank's send buffer, of
 * which 1/n stays on the rank), 1 for broadcast and send/recv.
 */
export function busBandwidthFactor(op: CollectiveOp, ranks: number): number {
  if (ranks <= 1) return 1;
  switch (op) {
    case 'all_reduce':
      return (2 * (ranks - 1)) / ranks;
    case 'all_gather':
    case 'reduce_scatter':
    case 'all_to_all':
    case 'ep_dispatch':
      return (ranks - 1) / ranks;
    case 'broadcast':
    case 'send_recv':
      return 1;
  }
}
