import type { ModelSpec } from './model.js';

/**
 * Words for the parts of published models the simulation leaves out (ModelSpec.notModelled), shared by the presets
 * and the Hugging Face import so that both say the same.
 */

/** DeepSeek-V3's multi-token prediction (its report §2.2): `layers` more transformer layers, each with an LM-head pass. */
export function multiTokenPredictionLeftOut(layers: number): string {
  return `the multi-token-prediction module (${layers} more transformer layer${layers === 1 ? '' : 's'} and LM-head pass${layers === 1 ? '' : 'es'} per token)`;
}

/** GPT-OSS (its model card): sinks in every attention, and a 128-token band on every other layer. */
export const GPT_OSS_LEFT_OUT =
  "the attention sinks, and the 128-token banded attention of every other layer (counted as full attention, so attention's time is over-counted)";

/** One sentence on what a model's source describes that the simulation leaves out; undefined when nothing is. */
export function modelLeftOutNote(model: ModelSpec): string | undefined {
  const left = model.notModelled ?? [];
  return left.length === 0
    ? undefined
    : `${model.name}: not modelled, so not in the step or memory: ${left.join('; ')}`;
}
