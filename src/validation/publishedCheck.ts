import type { RowProgress } from './rowProgress.js';
import { runMegatronSc21 } from './runMegatronSc21.js';
import { runMegatronSp22 } from './runMegatronSp22.js';
import { runH200Kernels } from './runH200Kernels.js';
import { runAllSets } from './runAll.js';
import { runFit } from './runFit.js';
import { runVtrainSet } from './runVtrain.js';
import type { ValidateOptions } from './validateArgs.js';

/**
 * `clustersim check-published` (`npm run validate`): predicts the rows of a published measurement set and returns the
 * text to print, ending in a newline; without options the vTrain set (runVtrain.ts), `--all` every set (runAll.ts),
 * `--set megatron-sc21` and the others one set each. The options are checked by validateArgs.ts; `progress` shows the
 * rows as they are done.
 */
export async function runPublishedCheck(options: ValidateOptions, progress: RowProgress): Promise<string> {
  if (options.all) return runAllSets(options, progress);
  if (options.fit) return runFit(options);
  if (options.set === 'megatron-sc21') return runMegatronSc21(options, progress);
  if (options.set === 'megatron-sp22') return runMegatronSp22(options);
  if (options.set === 'h200-kernels') return runH200Kernels(options);
  return runVtrainSet(options, progress);
}
