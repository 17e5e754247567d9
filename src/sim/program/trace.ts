import type { Program } from './types.js';

/**
 * What happened: for every task its start and end time (ns). A collective task is one span on the
 * comm stream of each rank in its group. Statistics are derived from this and nothing else.
 */
export interface Trace {
  program: Program;
  startNs: Float64Array;
  endNs: Float64Array;
  /** When the last task ended, ns. */
  makespanNs: number;
}
