import { VTRAIN_VOCABS, type VtrainVocab } from './vtrain.js';

/** The published sets `--set` names. */
export const PUBLISHED_SETS = ['vtrain', 'megatron-sc21', 'megatron-sp22', 'h200-kernels'] as const;

/** Options of `clustersim check-published` (`npm run validate`), as the runners take them. */
export interface ValidateOptions {
  set: (typeof PUBLISHED_SETS)[number];
  only?: 'single' | 'multi';
  /** First N rows of each set (Infinity: all). */
  limit: number;
  json: boolean;
  decompose: boolean;
  /** Every set at once: each set's error, the ranking quality, the error bands (runAll.ts). */
  all: boolean;
  /** With --all: write the residuals the error bands rest on (data/validation-residuals.json). */
  writeResiduals: boolean;
  /** Fit the project's fitted constants on their training subsets (runFit.ts). */
  fit: boolean;
  /** vtrain set: host cost per framework call, µs, in place of the cited one (a sensitivity run). */
  hostOpUs?: number;
  /** vtrain set: host cost per torch.distributed collective call, µs, in place of the cited one (a sensitivity run). */
  hostCollectiveUs?: number;
  /** vtrain set: how the vocabulary is split over tensor-parallel ranks. */
  vocab: VtrainVocab;
}

/**
 * The options as the command line gave them (commander parses them, src/cli): the values as typed, with their
 * defaults (`--set vtrain`, `--vocab peer`); a switch is true when given.
 */
export interface PublishedCheckArgs {
  set: string;
  only?: string;
  limit?: string;
  hostOpUs?: string;
  hostCollectiveUs?: string;
  vocab: string;
  json?: boolean;
  decompose?: boolean;
  all?: boolean;
  writeResiduals?: boolean;
  fit?: boolean;
}

/** The long flags given on the command line (`--set`, `--json`): an option left at its default is not given. */
export type GivenFlags = ReadonlySet<string>;

function setOf(value: string): ValidateOptions['set'] {
  const set = PUBLISHED_SETS.find((s) => s === value);
  if (set === undefined) throw new Error(`--set: unknown set '${value}' (${PUBLISHED_SETS.join(' | ')})`);
  return set;
}

function groupOf(value: string | undefined): ValidateOptions['only'] {
  if (value === undefined || value === 'single' || value === 'multi') return value;
  throw new Error(`--only: '${value}' is not a group (single | multi)`);
}

function limitOf(value: string | undefined): number {
  if (value === undefined) return Infinity;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`--limit: expected a whole number ≥ 1, got '${value}'`);
  return limit;
}

/** A host cost option's value in µs, or undefined when it is not given. */
function hostMicroseconds(value: string | undefined, option: string, maxUs: number): number | undefined {
  if (value === undefined) return undefined;
  const us = Number(value);
  if (!(us > 0 && us <= maxUs)) throw new Error(`${option}: expected µs > 0 (at most ${maxUs}), got '${value}'`);
  return us;
}

function vocabOf(value: string): VtrainVocab {
  const vocab = VTRAIN_VOCABS.find((v) => v === value);
  if (vocab === undefined) throw new Error(`--vocab: unknown split '${value}' (${VTRAIN_VOCABS.join(' | ')})`);
  return vocab;
}

/** Which of `flags` are given, in the order of `flags`. */
const givenOf = (flags: readonly string[], given: GivenFlags): string[] => flags.filter((f) => given.has(f));

/** What `--fit` refuses: every option but `--json`. */
const NOT_WITH_FIT = [
  '--all',
  '--set',
  '--only',
  '--limit',
  '--host-op-us',
  '--host-collective-us',
  '--vocab',
  '--decompose',
  '--write-residuals',
];

/** `--fit` fits on the training subsets, not on a set: it takes `--json` alone. */
function checkFit(given: GivenFlags): void {
  const others = givenOf(NOT_WITH_FIT, given);
  if (others.length > 0)
    throw new Error(
      `--fit: not with ${others.join(', ')} (it fits on the training subsets, not on a set); it takes --json`,
    );
}

/** The residuals are those of every row of every set. */
function checkResiduals(args: PublishedCheckArgs, given: GivenFlags): void {
  if (!args.writeResiduals) return;
  if (!args.all) throw new Error('--write-residuals: only with --all (the residuals are those of every set)');
  if (given.has('--limit')) throw new Error('--write-residuals: not with --limit (the error bands rest on every row)');
}

/** `--all` runs every set as it stands: the options of one set are refused, not ignored. */
function checkAll(given: GivenFlags): void {
  const refused = givenOf(['--set', '--only', '--host-op-us', '--host-collective-us', '--vocab', '--decompose'], given);
  if (refused.length > 0)
    throw new Error(
      `${refused.join(', ')}: not with --all, which runs every set as it stands` +
        ' (it takes --limit, --json and --write-residuals)',
    );
}

/** The other sets take --limit and --json only: an option of the vtrain set would be ignored without a word. */
function checkOtherSet(set: ValidateOptions['set'], given: GivenFlags): void {
  const refused = givenOf(['--only', '--host-op-us', '--host-collective-us', '--vocab', '--decompose'], given);
  if (refused.length > 0)
    throw new Error(`${refused.join(', ')}: for the vtrain set only; --set ${set} takes --limit and --json`);
}

/** The options that do not go together. */
function checkCombinations(args: PublishedCheckArgs, set: ValidateOptions['set'], given: GivenFlags): void {
  if (args.fit) checkFit(given);
  checkResiduals(args, given);
  if (args.all) checkAll(given);
  else if (set !== 'vtrain') checkOtherSet(set, given);
}

/**
 * The options the runners take, from the command line's: converts and checks each value, then the options that do
 * not go together; throws an Error whose message says what is wrong and what is allowed.
 */
export function validateOptions(args: PublishedCheckArgs, given: GivenFlags): ValidateOptions {
  const set = setOf(args.set);
  const only = groupOf(args.only);
  const limit = limitOf(args.limit);
  // The scenario fields' own limits (schema.ts: training.hostOpUs, training.hostCollectiveUs).
  const hostOpUs = hostMicroseconds(args.hostOpUs, '--host-op-us', 10_000);
  const hostCollectiveUs = hostMicroseconds(args.hostCollectiveUs, '--host-collective-us', 100_000);
  const vocab = vocabOf(args.vocab);
  checkCombinations(args, set, given);
  return {
    hostOpUs,
    hostCollectiveUs,
    vocab,
    set,
    only,
    limit,
    json: args.json === true,
    decompose: args.decompose === true,
    all: args.all === true,
    writeResiduals: args.writeResiduals === true,
    fit: args.fit === true,
  };
}
