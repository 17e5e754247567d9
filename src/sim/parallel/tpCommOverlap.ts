import type { Op } from '../workload/ops.js';
import type { TpSync } from './tpSync.js';

/**
 * SMs Transformer Engine's userbuffers communication kernels take beside a GEMM, as `--tp-comm-overlap` runs them
 * (transformer_engine/pytorch/module/base.py `initialize_ub`, default config: 16 SMs with `set_sm_margin` for the
 * `pipeline` and `bulk` methods, 1 SM and no margin for `ring_exchange`). NeMo's recipes set their own per layer.
 */
export interface TpCommOverlapSms {
  /** Beside the attention projection's forward GEMM (its pipelined reduce-scatter). */
  proj: number;
  /** Beside the second MLP linear's forward GEMM (its pipelined reduce-scatter). */
  fc2: number;
  /** Beside the QKV and first MLP linear's backward GEMMs (the bulk all-gather and reduce-scatter). */
  bulk: number;
}

export const TE_DEFAULT_OVERLAP_SMS: TpCommOverlapSms = { proj: 16, fc2: 16, bulk: 16 };

/** The chunks TE's pipelined reduce-scatter cuts a GEMM's output into (`num_splits`, default 4). */
export const PIPELINE_RS_SPLITS = 4;

/**
 * GEMMs whose all-gather TE overlaps by ring exchange: the gathered input's chunks arrive while earlier ones compute.
 */
const RING_EXCHANGE = new Set(['qkv', 'fc1', 'proj.dgrad', 'fc2.dgrad']);
/** GEMMs whose output TE reduce-scatters in a pipeline, chunk by chunk as the GEMM produces them. */
const PIPELINE_RS = new Set(['proj', 'fc2']);

const base = (name: string) => (name.startsWith('recompute.') ? name.slice('recompute.'.length) : name);

/**
 * The sequence-parallel collectives of a pass as Transformer Engine overlaps them with their GEMMs (Megatron
 * `--tp-comm-overlap`, which needs sequence parallelism):
 * - the all-gather before QKV and FC1 (forward) and before the projection's and FC2's input-gradient GEMMs (backward)
 *   runs while the GEMM computes (ring exchange), and the next op waits for both: the GEMM's last chunk, which waits
 *   for the last piece, is not modelled;
 * - the reduce-scatter after the projection and FC2 (forward) runs while the GEMM computes, all but its last chunk
 *   (1/`PIPELINE_RS_SPLITS`), which follows the GEMM;
 * - the backward's other collectives (QKV's and FC1's input-gradient reduce-scatter, the re-gather for their weight
 *   gradients) already overlap their GEMMs without it (tpSync.ts).
 */
export function overlapTpSyncs(names: readonly string[], syncs: readonly TpSync[]): TpSync[] {
  const out: TpSync[] = [];
  for (const s of syncs) {
    const next = names[s.neededBy];
    const after = names[s.afterOp];
    if (
      s.group !== 'cp' &&
      s.op === 'all_gather' &&
      s.neededBy === s.afterOp + 1 &&
      next !== undefined &&
      RING_EXCHANGE.has(base(next))
    ) {
      out.push({ ...s, neededBy: s.neededBy + 1, label: `${s.label} (overlapped)` });
    } else if (
      s.group !== 'cp' &&
      s.op === 'reduce_scatter' &&
      s.neededBy === s.afterOp + 1 &&
      after !== undefined &&
      PIPELINE_RS.has(base(after))
    ) {
      const tail = s.bytes / PIPELINE_RS_SPLITS;
      out.push({ ...s, bytes: s.bytes - tail, afterOp: s.afterOp - 1, label: `${s.label} (overlapped)` });
      out.push({ ...s, bytes: tail, label: `${s.label} (last chunk)` });
    } else {
      out.push(s);
    }
  }
  return out.sort((a, b) => a.afterOp - b.afterOp);
}

/** The GEMMs that give SMs to the communication beside them, with how many (`TpCommOverlapSms`). */
export function withOverlapSmMargin(op: Op, sms: TpCommOverlapSms): Op {
  const name = base(op.name);
  const margin =
    name === 'proj'
      ? sms.proj
      : name === 'fc2'
        ? sms.fc2
        : ['qkv.dgrad', 'qkv.wgrad', 'fc1.dgrad', 'fc1.wgrad'].includes(name)
          ? sms.bulk
          : 0;
  return margin > 0 && op.kind === 'gemm' ? { ...op, smMargin: margin } : op;
}
