import { z } from 'zod';

/**
 * The scenario sections that say how the step is simulated rather than what is trained: how collectives are chosen
 * and run (`comm`), run-to-run variation (`noise`) and the trade of detail for speed (`simulation`). Part of the
 * scenario's shape (schema.ts).
 */

/** How collectives are chosen and run; measured nccl-tests tables of this machine. */
export const commSchema = z
  .object({
    algorithm: z.enum(['auto', 'ring', 'tree', 'hierarchical', 'nvls']).default('auto'),
    protocol: z.enum(['auto', 'LL', 'LL128', 'Simple']).default('auto'),
    mode: z.enum(['aggregated', 'step']).default('aggregated'),
    /**
     * nccl-tests results of this machine: calls of `op` over `ranks` GPUs inside one node take the
     * measured time (interpolated) instead of the model's; text output of nccl-tests or a CSV with
     * size(B) and time(ns|us) columns, relative to the scenario file.
     */
    measured: z
      .array(
        z
          .object({
            op: z.enum(['all_reduce', 'all_gather', 'reduce_scatter', 'broadcast']),
            ranks: z.number().int().min(2),
            file: z.string().min(1),
          })
          .strict(),
      )
      .default([]),
  })
  .strict()
  .default({});

/** Run-to-run variation, drawn from the scenario seed. */
export const noiseSchema = z
  .object({
    /**
     * Relative standard deviation of each compute task's duration, drawn independently per rank and
     * task (stragglers: a collective waits for its slowest member). 0 = every rank identical.
     */
    computeJitter: z.number().min(0).max(0.5).default(0),
    /**
     * Relative standard deviation of each GPU's own speed, for the whole job (manufacturing and power-management
     * variability; Sinha et al. SC22). The step waits for the slowest GPU wherever it synchronises: in symmetric mode
     * every GPU runs at the expected slowest of all (with a pipeline an upper estimate: each stage at its own GPUs'
     * expected slowest, one at all GPUs'), in full fidelity each draws its own from the seed.
     */
    gpuSpeedSpread: z.number().min(0).max(0.3).default(0),
  })
  .strict()
  .default({});

/** How the simulator trades detail for speed. */
export const simulationSchema = z
  .object({
    /** symmetric: one data-parallel replica simulated, the others as shadow traffic; full: every rank. */
    fidelity: z.enum(['symmetric', 'full']).default('symmetric'),
  })
  .strict()
  .default({});
