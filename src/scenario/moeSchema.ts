import { z } from 'zod';

const positiveInt = z.number().int().positive();
const count = z.number().int().min(0);

/**
 * A model's mixture-of-experts MLPs (src/sim/workload/moe.ts), `llama` models only: `experts` routed experts of which
 * each token takes `topK`, each of inner width `expertFfnHidden` (default the model's `ffnHidden`);
 * `sharedExpertFfnHidden` (default 0, none) the shared experts' width together; `denseLayers` (default 0) the first
 * layers that keep a dense MLP of `ffnHidden`. Over a preset the fields given replace the preset's.
 */
export const moeSchema = z
  .object({
    experts: positiveInt.optional(),
    topK: positiveInt.optional(),
    expertFfnHidden: positiveInt.optional(),
    sharedExpertFfnHidden: count.optional(),
    denseLayers: count.optional(),
  })
  .strict();
