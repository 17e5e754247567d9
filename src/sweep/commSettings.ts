import { CP_COMM_TYPES, type CpCommType } from '../sim/workload/ops.js';
import type { TpCommOverlapSms } from '../sim/parallel/tpCommOverlap.js';
import type { Scenario } from '../scenario/resolve.js';

/**
 * How a sweep's series communicates, beyond its sizes, held fixed at every GPU count like tp, cp and pp. Each field is
 * present only when it applies, as `simulate --json` writes them under `parallel`: `cpCommType` with cp > 1,
 * `tpCommOverlap` and `tpCommOverlapSms` when TP overlap is on. A plan, a series, a `scale --shard` record and the
 * `scale --json` series all carry the same fields.
 */
export interface CommSettings {
  /** How the context-parallel ranks exchange what attention needs (`parallel.cpCommType`); only with cp > 1. */
  cpCommType?: CpCommType;
  /** Transformer Engine's TP communication overlap (`parallel.tpCommOverlap`); only when on. */
  tpCommOverlap?: true;
  /** SMs the overlapped communication takes beside each GEMM (`parallel.tpCommOverlapSms`); only when on. */
  tpCommOverlapSms?: TpCommOverlapSms;
}

/** The settings of a resolved scenario (the sweep's reference). */
export function commSettingsOf(scenario: Scenario): CommSettings {
  const par = scenario.parallel;
  return {
    ...((par.cp ?? 1) > 1 ? { cpCommType: par.cpCommType ?? 'p2p' } : {}),
    ...(par.tpCommOverlap ? { tpCommOverlap: true as const, tpCommOverlapSms: { ...par.tpCommOverlap } } : {}),
  };
}

/** Only the settings of `x`, in a fixed order, without keys for those that do not apply (so JSON stays byte-stable). */
export function pickCommSettings(x: CommSettings): CommSettings {
  const { proj, fc2, bulk } = x.tpCommOverlapSms ?? { proj: 0, fc2: 0, bulk: 0 };
  return {
    ...(x.cpCommType !== undefined ? { cpCommType: x.cpCommType } : {}),
    ...(x.tpCommOverlap ? { tpCommOverlap: true as const, tpCommOverlapSms: { proj, fc2, bulk } } : {}),
  };
}

/**
 * The settings in words, for messages: `cp all_gather, TP overlap (SMs proj 24, fc2 16, bulk 0)`; '' when none apply.
 */
export function commSettingsText(x: CommSettings): string {
  const sms = x.tpCommOverlapSms;
  return [
    x.cpCommType !== undefined ? `cpCommType ${x.cpCommType}` : '',
    x.tpCommOverlap ? `tpCommOverlap${sms ? ` (SMs proj ${sms.proj}, fc2 ${sms.fc2}, bulk ${sms.bulk})` : ''}` : '',
  ]
    .filter((s) => s !== '')
    .join(', ');
}

const isSmCount = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * What is wrong with the settings of a parsed record `v` (with its `cp`), as [field, expected], or undefined when
 * they are well formed. Absent fields are fine: a series without context or TP overlap has none.
 */
export function commSettingsProblem(v: Record<string, unknown>): [string, string] | undefined {
  if (v.cpCommType !== undefined) {
    if (v.cp === undefined)
      return ['cpCommType', 'no cpCommType without cp (it applies only with context parallelism)'];
    if (!(CP_COMM_TYPES as readonly unknown[]).includes(v.cpCommType))
      return ['cpCommType', CP_COMM_TYPES.map((t) => `'${t}'`).join(', ')];
  }
  if (v.tpCommOverlap !== undefined && v.tpCommOverlap !== true)
    return ['tpCommOverlap', 'true, or no tpCommOverlap (overlap off)'];
  const sms = v.tpCommOverlapSms;
  if (sms !== undefined && v.tpCommOverlap !== true)
    return ['tpCommOverlapSms', 'no tpCommOverlapSms without tpCommOverlap: true'];
  if (v.tpCommOverlap === true) {
    const counts =
      typeof sms === 'object' && sms !== null && !Array.isArray(sms) ? (sms as Record<string, unknown>) : {};
    if (!['proj', 'fc2', 'bulk'].every((k) => isSmCount(counts[k])))
      return ['tpCommOverlapSms', '{ proj, fc2, bulk }: SMs, whole numbers ≥ 0'];
  }
  return undefined;
}
