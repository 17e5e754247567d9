import type { StepParts } from './decompose.js';
import type { FittedFamily } from './families.js';
import { parametersPerTpRank, type ModelSpec } from '../sim/workload/model.js';

/**
 * The once-per-step time that grows with the layers (c1 of the four-part form, decompose.ts) over the parameters one
 * layer holds on a rank, ps per parameter, for the families without data or pipeline parallelism: there the
 * per-layer part of a step is the optimizer's work alone (no gradient all-reduce, no pipeline fill).
 */
export interface PerStepRate {
  hidden: number;
  tp: number;
  /** Parameters of one transformer layer on one TP rank. */
  layerParams: number;
  measuredPsPerParam: number;
  predictedPsPerParam: number;
}

/** The single-node GPT layer of a row's hidden size, as the vTrain scenarios build it (vtrain.ts). */
function gptLayer(hidden: number, heads: number): ModelSpec {
  return {
    name: 'vtrain-gpt-layer',
    arch: 'gpt',
    layers: 1,
    hidden,
    heads,
    kvHeads: heads,
    ffnHidden: 4 * hidden,
    seqLen: 1024,
    vocab: 1024,
    tiedEmbeddings: true,
  };
}

/** Per (hidden, tp): the mean over its dp-1, pp-1 families (`fittedFamilies`, one per micro-batch size). */
export function perStepRates(families: readonly FittedFamily[]): PerStepRate[] {
  const byCell = new Map<
    string,
    { hidden: number; tp: number; layerParams: number; measured: number[]; predicted: number[] }
  >();
  for (const { rows, measured: m, predicted: p } of families) {
    const r = rows[0].row;
    if (r.dp !== 1 || r.pp !== 1 || !m || !p) continue;
    const layerParams = parametersPerTpRank(gptLayer(r.hidden, r.heads), r.tp, (l) => l === 0);
    const psPerParam = (f: StepParts) => ((f.perStepMs(1) - f.perStepMs(0)) * 1e9) / layerParams;
    const key = `${r.hidden}/${r.tp}`;
    const cell = byCell.get(key) ?? { hidden: r.hidden, tp: r.tp, layerParams, measured: [], predicted: [] };
    cell.measured.push(psPerParam(m));
    cell.predicted.push(psPerParam(p));
    byCell.set(key, cell);
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return [...byCell.values()]
    .sort((a, b) => a.hidden - b.hidden || a.tp - b.tp)
    .map((c) => ({
      hidden: c.hidden,
      tp: c.tp,
      layerParams: c.layerParams,
      measuredPsPerParam: mean(c.measured),
      predictedPsPerParam: mean(c.predicted),
    }));
}
