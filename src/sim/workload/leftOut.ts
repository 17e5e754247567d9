import type { ModelSpec } from './model.js';

/**
 * Words for the parts of published models the simulation leaves out (ModelSpec.notModelled), shared by the presets
 * and the Hugging Face import so that both say the same.
 */

/** GPT-OSS (its model card): sinks in every attention, and a 128-token band on every other layer. */
export const GPT_OSS_LEFT_OUT =
  'the attention sinks, and the 128-token banded attention of every other layer (counted as full attention, ' +
  "so attention's time is over-counted)";

/** One sentence on what a model's source describes that the simulation leaves out; undefined when nothing is. */
export function modelLeftOutNote(model: ModelSpec): string | undefined {
  const left = model.notModelled ?? [];
  return left.length === 0
    ? undefined
    : `${model.name}: not modelled, so not in the step or memory: ${left.join('; ')}`;
}
