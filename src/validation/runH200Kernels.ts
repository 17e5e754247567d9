import { fileURLToPath } from 'node:url';
import { table as formatTable } from '../report/textTable.js';
import {
  attentionComparisons,
  llamaLayerComparisons,
  softmaxFallbackComparisons,
  type KernelComparison,
} from './h200Kernels.js';
import { median } from '../calibrate/stats.js';
import type { ValidateOptions } from './validateArgs.js';

/**
 * `npm run validate -- --set h200-kernels`: the H200 preset's attention kernels, eager Llama layers and Megatron's
 * softmax fallback against what PyTorch measured on one H200 (reports/calibration/h200, h200Kernels.ts), GPU time
 * only, as the text to print.
 */

/** The groups of comparisons, the first `limit` of each. */
function kernelGroups(limit: number): { name: string; rows: KernelComparison[] }[] {
  const file = (name: string) => fileURLToPath(new URL(`../../reports/calibration/h200/${name}`, import.meta.url));
  const options = { limit };
  return [
    {
      name: 'attention (SDPA, causal, head dim 128, 16k tokens; scripts/measure-attention.py)',
      rows: attentionComparisons(file('attention.json')).slice(0, options.limit),
    },
    {
      name: 'eager Llama layers (Hugging Face form, bf16, micro-batch 1; scripts/measure-llama-layer.py)',
      rows: llamaLayerComparisons(file('llama-layer.json')).slice(0, options.limit),
    },
    {
      name:
        'Llama layers under torch.compile against the default fused kernels' +
        ' (scripts/measure-llama-layer.py --compile)',
      rows: llamaLayerComparisons(file('llama-layer-compiled.json'), 'fused').slice(0, options.limit),
    },
    {
      name: "Megatron's torch softmax fallback (fp16 scores, fp32 softmax; scripts/measure-softmax-fallback.py)",
      rows: softmaxFallbackComparisons(file('softmax-fallback.json')).slice(0, options.limit),
    },
  ];
}

/** Every comparison of the set, the first `limit` of each group (`validate --all` summarises them). */
export function h200KernelRows(limit: number): KernelComparison[] {
  return kernelGroups(limit).flatMap((g) => g.rows);
}

/** The median and worst |error| of a group. */
function errorSummary(rows: KernelComparison[]) {
  return {
    medianAbsErrorPct: median(rows.map((r) => Math.abs(r.errorPct))),
    worstAbsErrorPct: Math.max(...rows.map((r) => Math.abs(r.errorPct))),
  };
}

const f = (x: number, d = 3) => x.toFixed(d);

/** A group's lines: its name, its table and its error summary. */
function groupLines(g: { name: string; rows: KernelComparison[] }): string[] {
  const s = errorSummary(g.rows);
  return [
    '',
    g.name,
    formatTable(
      ['case', 'predicted ms', 'measured ms', 'error'],
      g.rows.map((r) => [r.name, f(r.predictedS * 1e3), f(r.measuredS * 1e3), `${r.errorPct.toFixed(1)}%`]),
    ).replace(/^/gm, '  '),
    `  median |error| ${s.medianAbsErrorPct.toFixed(1)}%, worst ${s.worstAbsErrorPct.toFixed(1)}%`,
  ];
}

/** Compares the set and returns the text to print, ending in a newline (`--json`: one JSON object). */
export function runH200Kernels(options: Pick<ValidateOptions, 'limit' | 'json'>): string {
  const groups = kernelGroups(options.limit);
  if (options.json) {
    const json = { gpu: 'h200-sxm-141gb', groups: groups.map((g) => ({ ...g, ...errorSummary(g.rows) })) };
    return JSON.stringify(json, null, 2) + '\n';
  }
  const lines = [
    'The H200 preset against PyTorch on one NVIDIA H200 (reports/calibration/h200), GPU time' +
      ' (negative: predicted faster)',
    ...groups.flatMap(groupLines),
  ];
  return lines.join('\n') + '\n';
}
