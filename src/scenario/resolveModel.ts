import { resolve as resolvePath } from 'node:path';
import { ScenarioError } from '../sim/errors.js';
import { headDim, withPlainHeadDim, type ModelSpec } from '../sim/workload/model.js';
import { modelPreset } from '../sim/workload/modelPresets.js';
import { modelFromHfConfig } from '../sim/workload/hfConfig.js';
import { modelSchema, type ScenarioInput } from './schema.js';
import { withOverrides } from './resolveCluster.js';
import { InvalidScenarioError, problemOf, type Problem } from './errors.js';
import { expectation } from './zodProblems.js';
import { readStructuredFile } from './load.js';
import { resolveMoe } from './moeChecks.js';

/** Reads a Hugging Face config.json named in the scenario; every problem with it is reported at `model.hfConfig`. */
function modelFromHfFile(hfConfig: string, baseDir: string): ModelSpec {
  const full = resolvePath(baseDir, hfConfig);
  try {
    return modelFromHfConfig(readStructuredFile(full, 'Hugging Face config'), hfConfig);
  } catch (err) {
    if (err instanceof ScenarioError) {
      // Errors about the file's content carry its path as theirs; read errors have no path.
      if (err.path === hfConfig) throw new ScenarioError('model.hfConfig', `'${hfConfig}': ${problemOf(err).message}`);
      const hint =
        full === hfConfig ? '' : ` (a relative hfConfig is looked up from the scenario file's folder, ${baseDir})`;
      throw new ScenarioError('model.hfConfig', err.message + hint);
    }
    throw err;
  }
}

/** The model section resolved: a preset or Hugging Face config with the inline fields over it, or inline sizes. */
export function resolveModel(m: ScenarioInput['model'], baseDir: string, source: string): ModelSpec {
  const { preset, hfConfig, ...inline } = m;
  if (preset && hfConfig) throw new ScenarioError('model', 'give either preset or hfConfig, not both');
  let base: ModelSpec | undefined;
  if (preset) base = modelPreset(preset, 'model.preset');
  else if (hfConfig) base = modelFromHfFile(hfConfig, baseDir);
  if (base) {
    const model = withOverrides(base, inline, ['preset', 'moe']);
    const moe = resolveMoe(inline.moe, base.moe, model.ffnHidden);
    if (moe) model.moe = moe;
    // A multi-head model keeps one key/value head per query head when only the heads are changed.
    if (inline.heads !== undefined && inline.kvHeads === undefined && base.kvHeads === base.heads)
      model.kvHeads = model.heads;
    // The name says when the shape is no longer the preset's (the sequence length is a training choice).
    const shape =
      (['arch', 'layers', 'hidden', 'heads', 'kvHeads', 'ffnHidden', 'vocab', 'tiedEmbeddings'] as const).some(
        (k) => model[k] !== base![k],
      ) || headDim(model) !== headDim(base);
    const otherShape =
      JSON.stringify(model.mlpSizes) !== JSON.stringify(base.mlpSizes) ||
      JSON.stringify(model.moe) !== JSON.stringify(base.moe) ||
      (model.mtpLayers ?? 0) !== (base.mtpLayers ?? 0);
    if (inline.name === undefined && (shape || otherShape)) model.name = `${base.name} (modified)`;
    return withPlainHeadDim(model);
  }
  const missing: (keyof typeof inline)[] = (['arch', 'layers', 'hidden', 'seqLen', 'vocab'] as const).filter(
    (k) => inline[k] === undefined,
  );
  if (inline.arch !== 'mlp' && inline.heads === undefined) missing.push('heads');
  if (inline.arch === 'mlp' && inline.mlpSizes === undefined) missing.push('mlpSizes');
  if (missing.length > 0) {
    throw new InvalidScenarioError(
      source,
      missing.map((k) => ({
        path: `model.${k}`,
        message: `is required when the model has no preset or hfConfig; expected ${expectation(modelSchema.shape[k])}`,
      })),
    );
  }
  const arch = inline.arch!;
  const heads = inline.heads ?? 1;
  const hidden = inline.hidden!;
  return withPlainHeadDim({
    name: inline.name ?? `custom-${arch}`,
    arch,
    layers: inline.layers!,
    hidden,
    heads,
    kvHeads: inline.kvHeads ?? heads,
    ...(inline.headDim !== undefined ? { headDim: inline.headDim } : {}),
    ffnHidden: inline.ffnHidden ?? 4 * hidden,
    seqLen: inline.seqLen!,
    vocab: inline.vocab!,
    tiedEmbeddings: inline.tiedEmbeddings ?? arch !== 'llama',
    mlpSizes: inline.mlpSizes,
    ...(inline.mla ? { mla: inline.mla } : {}),
    ...(inline.mtpLayers ? { mtpLayers: inline.mtpLayers } : {}),
    ...withMoe(resolveMoe(inline.moe, undefined, inline.ffnHidden ?? 4 * hidden)),
  });
}

function withMoe(moe: ModelSpec['moe']): Pick<ModelSpec, 'moe'> {
  return moe ? { moe } : {};
}

/** The problems of the model's heads: heads that do not divide hidden, kvHeads that do not divide heads. */
export function checkModel(model: ModelSpec): Problem[] {
  const problems: Problem[] = [];
  if (model.arch !== 'mlp') {
    // With heads of a width of their own the projections map h to heads·headDim, so heads need not divide h.
    if (model.headDim === undefined && model.hidden % model.heads !== 0)
      problems.push({
        path: 'model.heads',
        message:
          `${model.heads} does not divide hidden (${model.hidden}); ` +
          'give model.headDim if the heads have a width of their own',
      });
    if (model.heads % model.kvHeads !== 0)
      problems.push({ path: 'model.kvHeads', message: `${model.kvHeads} does not divide heads (${model.heads})` });
  }
  return problems;
}
