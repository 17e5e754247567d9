import { InvalidScenarioError, type Problem } from './errors.js';
import { shellWords } from './importShellWords.js';
import { closest } from '../sim/closestName.js';

/**
 * The Megatron-LM flags `--megatron-args` knows, and reading an argument list into them. Names and
 * kinds follow `megatron/training/arguments.py`; the last occurrence of a flag wins, as with argparse.
 */

export const SOURCE = '--megatron-args';

/**
 * What a flag takes: nothing (`store_true`), a positive integer, one of some words, any text, or one or more words
 * (argparse `nargs='+'`; kept joined by single spaces).
 */
type FlagKind =
  | { kind: 'bool' }
  | { kind: 'int' }
  | { kind: 'choice'; choices: readonly string[] }
  | { kind: 'text' }
  | { kind: 'words'; words: readonly string[] };

const BOOL: FlagKind = { kind: 'bool' };
const INT: FlagKind = { kind: 'int' };
const TEXT: FlagKind = { kind: 'text' };
const choice = (...choices: string[]): FlagKind => ({ kind: 'choice', choices });

/** Flags read into the scenario. */
export const FLAGS: Readonly<Record<string, FlagKind>> = {
  'tensor-model-parallel-size': INT,
  'pipeline-model-parallel-size': INT,
  'context-parallel-size': INT,
  'cp-comm-type': { kind: 'words', words: ['p2p', 'all_gather', 'allgather', 'a2a', 'a2a+p2p'] },
  'num-layers-per-virtual-pipeline-stage': INT,
  'virtual-pipeline-model-parallel-size': INT,
  'num-virtual-stages-per-pipeline-rank': INT,
  'no-overlap-p2p-communication': BOOL,
  'account-for-embedding-in-pipeline-split': BOOL,
  'account-for-loss-in-pipeline-split': BOOL,
  'decoder-first-pipeline-num-layers': INT,
  'decoder-last-pipeline-num-layers': INT,
  'data-parallel-size': INT,
  'num-layers': INT,
  'hidden-size': INT,
  'num-attention-heads': INT,
  'group-query-attention': BOOL,
  'num-query-groups': INT,
  'ffn-hidden-size': INT,
  'kv-channels': INT,
  'seq-length': INT,
  'max-position-embeddings': INT,
  'micro-batch-size': INT,
  'global-batch-size': INT,
  'sequence-parallel': BOOL,
  'tp-comm-overlap': BOOL,
  'recompute-granularity': choice('full', 'selective'),
  'recompute-activations': BOOL,
  'recompute-method': choice('uniform', 'block'),
  'recompute-num-layers': INT,
  'distribute-saved-activations': BOOL,
  'use-distributed-optimizer': BOOL,
  'optimizer-cpu-offload': BOOL,
  'overlap-grad-reduce': BOOL,
  'overlap-param-gather': BOOL,
  'ddp-bucket-size': INT,
  'grad-reduce-in-bf16': BOOL,
  'accumulate-allreduce-grads-in-fp32': BOOL,
  fp16: BOOL,
  bf16: BOOL,
  swiglu: BOOL,
  normalization: choice('LayerNorm', 'RMSNorm'),
  'untie-embeddings-and-output-weights': BOOL,
  'padded-vocab-size': INT,
  'vocab-size': INT,
  'make-vocab-size-divisible-by': INT,
  'tokenizer-type': TEXT,
  'merge-file': TEXT,
  'use-flash-attn': BOOL,
  'attention-backend': choice('auto', 'flash', 'fused', 'unfused', 'local'),
  optimizer: choice('adam', 'sgd'),
  'use-precision-aware-optimizer': BOOL,
  'main-params-dtype': choice('fp32', 'fp16'),
  'main-grads-dtype': choice('fp32', 'bf16'),
  'exp-avg-dtype': choice('fp32', 'fp16', 'bf16', 'fp8'),
  'exp-avg-sq-dtype': choice('fp32', 'fp16', 'bf16', 'fp8'),
  'disable-bias-linear': BOOL,
  'fp8-format': choice('hybrid', 'e4m3'),
  'fp8-recipe': choice('delayed', 'tensorwise', 'mxfp8', 'blockwise'),
  'fp8-param-gather': BOOL,
  'num-experts': INT,
  'moe-router-topk': INT,
  'moe-ffn-hidden-size': INT,
  'moe-shared-expert-intermediate-size': INT,
  'moe-layer-freq': TEXT,
  'expert-model-parallel-size': INT,
  'expert-tensor-parallel-size': INT,
  'moe-grouped-gemm': BOOL,
  'moe-token-dispatcher-type': choice('allgather', 'alltoall', 'flex', 'alltoall_seq'),
  'moe-expert-capacity-factor': TEXT,
  'moe-pad-expert-input-to-capacity': BOOL,
  'moe-router-load-balancing-type': TEXT,
  'moe-flex-dispatcher-backend': TEXT,
  'moe-enable-deepep': BOOL,
  'moe-router-num-groups': INT,
  'moe-router-group-topk': INT,
  'mtp-num-layers': INT,
  'overlap-moe-expert-parallel-comm': BOOL,
};

/** Flags that change performance but are not modelled: accepted with a warning (any values). */
export const NOT_MODELLED: Readonly<Record<string, string>> = {
  'disable-tp-comm-overlap-ag':
    'every ring-exchange all-gather is simulated overlapped with its GEMM under --tp-comm-overlap',
  'disable-tp-comm-overlap-rs':
    'every pipelined reduce-scatter is simulated overlapped with its GEMM under --tp-comm-overlap',
  'disable-tp-comm-bulk-dgrad':
    'the backward bulk overlaps stay simulated as overlapped, with their SM margin (parallel.tpCommOverlapSms.bulk; ' +
    'set it to 0)',
  'disable-tp-comm-bulk-wgrad':
    'the backward bulk overlaps stay simulated as overlapped, with their SM margin (parallel.tpCommOverlapSms.bulk; ' +
    'set it to 0)',
  'tp-comm-overlap-rs-dgrad':
    'the input-gradient reduce-scatters are simulated overlapped with the weight-gradient GEMMs either way',
  'tp-comm-overlap-cfg':
    'the userbuffers config file is not read; ' +
    "Transformer Engine's default SMs per overlap are used (set parallel.tpCommOverlapSms)",
  'hierarchical-context-parallel-sizes':
    'only used by --cp-comm-type a2a+p2p, which is simulated as the p2p ring over all cp ranks',
  'first-last-layers-bf16': 'every transformer layer is simulated with FP8 GEMMs',
  'num-layers-at-start-in-bf16': 'every transformer layer is simulated with FP8 GEMMs',
  'num-layers-at-end-in-bf16': 'every transformer layer is simulated with FP8 GEMMs',
  'no-fp8-wgrad': 'the weight-gradient GEMMs are simulated in FP8 too',
  'mtp-loss-scaling-factor':
    "the loss weight changes no step time (multi-token prediction's work is simulated whatever its weight)",
  'delay-wgrad-compute':
    'the weight-gradient GEMMs run right after their input-gradient GEMMs; ' +
    'delaying them to hide more of the all-to-alls is not modelled',
  'moe-deepep-num-sms':
    "DeepEP's SMs are not taken from the GEMMs: its dispatch and combine are simulated blocking the compute they feed",
  'rampup-batch-size': 'the step is simulated at the full --global-batch-size (after the ramp-up)',
  deepspeed_config: 'pass the DeepSpeed config file to clustersim with --deepspeed-config',
  deepspeed: 'Megatron-DeepSpeed: pass the DeepSpeed config file to clustersim with --deepspeed-config',
  'zero-stage':
    'Megatron-DeepSpeed: pass the DeepSpeed config file to clustersim with --deepspeed-config (its ' +
    'zero_optimization.stage is read)',
};

/**
 * Flags with no effect on one step's time or memory (data, schedule of the learning rate, logging): accepted silently.
 */
const NO_EFFECT = new Set(
  (
    'train-iters train-samples lr min-lr lr-decay-style lr-decay-iters lr-decay-samples lr-warmup-fraction ' +
    'lr-warmup-iters lr-warmup-samples lr-warmup-init weight-decay start-weight-decay end-weight-decay ' +
    'weight-decay-incr-style adam-beta1 adam-beta2 adam-eps sgd-momentum init-method-std clip-grad seed data-path ' +
    'train-data-path valid-data-path test-data-path data-cache-path split vocab-file tokenizer-model log-interval ' +
    'save-interval eval-interval eval-iters save load tensorboard-dir tensorboard-log-interval wandb-project ' +
    'wandb-exp-name wandb-save-dir distributed-backend distributed-timeout-minutes hidden-dropout attention-dropout ' +
    'use-mcore-models use-legacy-models transformer-impl position-embedding-type rotary-base rotary-percent ' +
    'use-rotary-position-embeddings no-position-embedding add-bias-linear no-masked-softmax-fusion ' +
    'no-bias-gelu-fusion no-bias-swiglu-fusion no-bias-dropout-fusion no-gradient-accumulation-fusion ' +
    'no-async-tensor-model-parallel-allreduce apply-query-key-layer-scaling attention-softmax-in-fp32 loss-scale ' +
    'initial-loss-scale min-loss-scale loss-scale-window hysteresis log-params-norm log-num-zeros-in-grad ' +
    'log-throughput log-timers-to-tensorboard log-validation-ppl-to-tensorboard log-memory-to-tensorboard ' +
    'timing-log-level exit-interval exit-duration-in-mins ckpt-format no-load-optim no-load-rng no-save-optim ' +
    'no-save-rng finetune dataloader-type num-workers mock-data eod-mask-loss reset-position-ids ' +
    'reset-attention-mask no-persist-layer-norm norm-epsilon layernorm-epsilon use-checkpoint-args async-save ' +
    'use-dist-ckpt ckpt-fully-parallel-save ckpt-fully-parallel-load check-for-nan-in-loss-and-grad manual-gc ' +
    'manual-gc-interval bias-gelu-fusion bias-dropout-fusion masked-softmax-fusion use-cpu-initialization data-impl ' +
    'no-create-attention-mask-in-dataloader qk-layernorm ' +
    // FP8 numerics (how scales are chosen), not speed.
    'fp8-margin fp8-interval fp8-amax-history-len fp8-amax-compute-algo'
  ).split(' '),
);

/**
 * An unknown flag as a warning shows it: with the Megatron flag it probably misspells, if one is close
 * (`--tensor-model-paralel-size (did you mean --tensor-model-parallel-size?)`).
 */
export function unknownFlagShown(flag: string): string {
  const meant = closest(flag.replace(/^--?/, ''), [...Object.keys(FLAGS), ...Object.keys(NOT_MODELLED), ...NO_EFFECT]);
  return meant ? `${flag} (did you mean --${meant}?)` : flag;
}

function isFlag(word: string): boolean {
  return /^--?[A-Za-z]/.test(word);
}

function expected(spec: FlagKind): string {
  if (spec.kind === 'int') return ' (a positive whole number)';
  if (spec.kind === 'choice') return ` (one of ${spec.choices.join(', ')})`;
  return '';
}

/** Words up to and including the training script (`torchrun … pretrain_gpt.py`) are the launcher's. */
function dropLauncher(words: string[]): string[] {
  const script = words.findIndex((w) => !isFlag(w) && /\.py$/.test(w));
  return script >= 0 ? words.slice(script + 1) : words;
}

/** A Megatron-LM argument list, read: the known flags with their values, and what was left over. */
export class MegatronArgs {
  /** Known flag (without dashes) → value (`''` for a boolean flag). */
  readonly values = new Map<string, string>();
  /** Unknown flags, as written (`--my-flag`). */
  readonly unknown: string[] = [];
  /** Flags that are known but not modelled, with the values that followed them. */
  readonly notModelled = new Map<string, string[]>();
  /** Words that belong to no flag (unexpanded `${ARGS[@]}`, a stray word). */
  readonly stray: string[] = [];
  /** Where reading stopped (a pipe, `;`, a redirection), if it did. */
  readonly stoppedAt?: string;

  /** What is wrong with the flags read, one problem per flag (`read` and `check` collect them). */
  private readonly problems: Problem[] = [];

  /**
   * @throws ScenarioError for an unterminated quote; InvalidScenarioError listing every known flag without its value,
   *   boolean flag given `=value`, or value that is not a positive whole number or not one of the flag's choices
   */
  constructor(text: string) {
    const { words, stoppedAt } = shellWords(text, SOURCE);
    this.stoppedAt = stoppedAt;
    this.read(dropLauncher(words));
    for (const flag of this.values.keys()) this.check(flag);
    if (this.problems.length > 0) throw new InvalidScenarioError(SOURCE, this.problems);
  }

  private problem(flag: string, message: string): void {
    this.problems.push({ path: `--${flag}`, message });
  }

  /** Records what is wrong with a flag's value: not a positive whole number, or not one of its choices. */
  private check(flag: string): void {
    const v = this.values.get(flag) ?? '';
    const spec = FLAGS[flag];
    if (spec?.kind === 'int' && (!/^\d+$/.test(v) || Number(v) <= 0)) {
      const hint = v.includes('$')
        ? ' (shell variables are not expanded: paste the command as it ran, e.g. from the job log)'
        : '';
      this.problem(flag, `expected a positive whole number, got '${v}'${hint}`);
    } else if (spec?.kind === 'choice' && !spec.choices.includes(v)) {
      this.problem(flag, `expected one of ${spec.choices.join(', ')}; got '${v}'`);
    }
  }

  private read(words: string[]): void {
    let i = 0;
    while (i < words.length) {
      const word = words[i++];
      if (!isFlag(word)) {
        this.stray.push(word);
        continue;
      }
      const eq = word.indexOf('=');
      const name = (eq < 0 ? word : word.slice(0, eq)).replace(/^--?/, '');
      const inline = eq < 0 ? undefined : word.slice(eq + 1);
      const spec = FLAGS[name];
      if (spec?.kind === 'bool') {
        if (inline !== undefined) this.problem(name, `takes no value (a switch), got '${inline}'`);
        else this.values.set(name, '');
      } else if (spec) {
        let value = inline;
        if (value === undefined) {
          if (i >= words.length || isFlag(words[i])) {
            this.problem(name, `needs a value${expected(spec)}`);
            continue;
          }
          value = words[i++];
        }
        // nargs='+': the flag's own words that follow belong to it too (not after `=value`, as with argparse); anything
        // else (an unexpanded $VAR, a stray word) is left for the stray-word warning.
        if (spec.kind === 'words' && inline === undefined)
          while (i < words.length && spec.words.includes(words[i])) value += ` ${words[i++]}`;
        this.values.set(name, value);
      } else {
        // Unknown and not-modelled flags take whatever values follow them (argparse nargs vary: --data-path a b,
        // --rampup-batch-size 16 16 5859375).
        const values = inline === undefined ? [] : [inline];
        while (i < words.length && !isFlag(words[i])) values.push(words[i++]);
        if (Object.hasOwn(NOT_MODELLED, name)) this.notModelled.set(name, values);
        else if (!NO_EFFECT.has(name) && !this.unknown.includes(`--${name}`)) this.unknown.push(`--${name}`);
      }
    }
  }

  has(flag: string): boolean {
    return this.values.has(flag);
  }

  /** The flag's value as a positive whole number (the constructor refused any other). */
  int(flag: string): number | undefined {
    const v = this.values.get(flag);
    return v === undefined ? undefined : Number(v);
  }

  /** The flag's value (one of its choices: the constructor refused any other). */
  pick(flag: string): string | undefined {
    return this.values.get(flag);
  }

  /** The flag as written, with its value (`--tensor-model-parallel-size 8`), for "where it came from". */
  shown(flag: string): string {
    const v = this.values.get(flag);
    return v ? `--${flag} ${v}` : `--${flag}`;
  }
}
