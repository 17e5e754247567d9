import { fileErrorReason } from '../fileErrors.js';
import { resolve } from 'node:path';
import { ScenarioError } from '../sim/errors.js';
import type { TrainingPrecision } from '../sim/setup.js';
import { applyOverrides, loadScenarioFile, type RawScenario } from './load.js';
import { resolveClusterSection, resolveModelSection, resolveScenario, type Scenario } from './resolve.js';
import { InvalidScenarioError, withFileLines, type Problem } from './errors.js';
import { importMegatronArgs, type MegatronContext } from './importMegatron.js';
import { importDeepSpeedConfig, type DeepSpeedContext } from './importDeepSpeed.js';
import { shownValue, yamlScalar, type ImportedField, type ImportResult } from './importResult.js';
import { readInputText } from '../inputFile.js';

/**
 * Applying imported framework settings to a scenario: the file, then `--megatron-args`, then
 * `--deepspeed-config`, then `--set`, then the usual validation. Also reads the inputs (a file for
 * the DeepSpeed config, `@file` or the text itself for the Megatron arguments) and describes what
 * was taken, for the summary.
 */

/** The import options of a command. */
export interface ImportOptions {
  /** Megatron-LM arguments as pasted, or `@path` of a file that holds them. */
  megatronArgs?: string;
  /** Path of a DeepSpeed ds_config.json. */
  deepspeedConfig?: string;
}

/** A resolved scenario and the imports that went into it. */
export interface ScenarioWithImports {
  scenario: Scenario;
  imports: ImportResult[];
}

function readText(path: string, what: string): string {
  try {
    return readInputText(path);
  } catch (err) {
    const why = fileErrorReason(err);
    const full = resolve(path);
    throw new ScenarioError('', `cannot read ${what} '${path}'${full !== path ? ` (${full})` : ''}: ${why}`);
  }
}

type Raw = Record<string, unknown>;

/**
 * The `gradient_accumulation_steps` a DeepSpeed config pins as a number, if any (read after `importsOf` has checked
 * the file). A strong-scaling sweep keeps `train_batch_size`, so the accumulation it pins holds at one size only.
 */
export function pinnedAccumulationSteps(path: string): number | undefined {
  const steps = (JSON.parse(readText(path, 'DeepSpeed config')) as Raw).gradient_accumulation_steps;
  return typeof steps === 'number' ? steps : undefined;
}

function get(raw: unknown, path: string): unknown {
  let obj = raw;
  for (const k of path.split('.')) {
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
    obj = (obj as Raw)[k];
  }
  return obj;
}

function remove(raw: unknown, path: string): void {
  const keys = path.split('.');
  const parent = get(raw, keys.slice(0, -1).join('.'));
  if (parent && typeof parent === 'object' && !Array.isArray(parent)) delete (parent as Raw)[keys[keys.length - 1]];
}

/**
 * Applies imported fields to a raw scenario (a copy): values through the same path as `--set`, removals by deleting.
 */
export function applyImports(raw: unknown, imports: readonly ImportResult[]): unknown {
  let out = structuredClone(raw);
  for (const imp of imports) {
    for (const f of imp.fields) {
      if (f.value === undefined) remove(out, f.path);
      else out = applyOverrides(out, [`${f.path}=${yamlScalar(f.value)}`]);
    }
  }
  return out;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);
const PRECISIONS: readonly string[] = ['bf16', 'fp16', 'fp32', 'tf32'];

/** GPUs of a raw scenario's cluster, or undefined when the cluster section is not valid (resolution reports that). */
function gpusOf(raw: unknown, source: string): number | undefined {
  try {
    const cluster = resolveClusterSection(get(raw, 'cluster'), source);
    return cluster.nodes * cluster.node.gpusPerNode;
  } catch (err) {
    if (err instanceof ScenarioError) return undefined;
    throw err;
  }
}

function precisionOf(raw: unknown): TrainingPrecision {
  const p = get(raw, 'training.precision');
  return typeof p === 'string' && PRECISIONS.includes(p) ? (p as TrainingPrecision) : 'bf16';
}

/**
 * A size of the raw scenario's model: given inline, or from its preset or Hugging Face config (read here the way
 * validation reads it, from the scenario file's folder); undefined when none of them gives it.
 */
function modelSize(raw: unknown, field: 'layers' | 'hidden', baseDir: string, source: string): number | undefined {
  const inline = num(get(raw, `model.${field}`));
  if (inline !== undefined) return inline;
  try {
    return resolveModelSection(get(raw, 'model'), baseDir, source)[field];
  } catch (err) {
    if (err instanceof ScenarioError) return undefined;
    throw err;
  }
}

function megatronContext(raw: unknown, source: string, baseDir: string): MegatronContext {
  return { gpus: gpusOf(raw, source), layers: modelSize(raw, 'layers', baseDir, source), precision: precisionOf(raw) };
}

function deepSpeedContext(raw: unknown, source: string, baseDir: string): DeepSpeedContext {
  const known = {
    precision: precisionOf(raw),
    hidden: modelSize(raw, 'hidden', baseDir, source),
    fp32Gradients: get(raw, 'parallel.fp32Gradients') === true,
  };
  const given = num(get(raw, 'parallel.dp'));
  if (given) return { ...known, dp: given, dpFrom: 'parallel.dp' };
  const gpus = gpusOf(raw, source);
  const tp = num(get(raw, 'parallel.tp')) ?? 1;
  const pp = num(get(raw, 'parallel.pp')) ?? 1;
  const cp = num(get(raw, 'parallel.cp')) ?? 1;
  if (gpus === undefined || gpus % (tp * cp * pp) !== 0) return known;
  return {
    ...known,
    dp: gpus / (tp * cp * pp),
    dpFrom: `${gpus} GPUs / (tp ${tp} × ${cp > 1 ? `cp ${cp} × ` : ''}pp ${pp})`,
  };
}

/** The `--set` values that name this field, a field inside it, or a mapping that holds it. */
function setsNaming(path: string, sets: readonly string[]): string[] {
  return sets.filter((s) => {
    const p = setPath(s);
    return p === path || path.startsWith(`${p}.`) || p.startsWith(`${path}.`);
  });
}

/** The field path of a `--set path=value`. */
function setPath(set: string): string {
  return set.slice(0, Math.max(0, set.indexOf('='))).trim();
}

/** True when `--set` names this field, a field inside it, or a mapping that holds it. */
function setBy(path: string, sets: readonly string[]): boolean {
  return setsNaming(path, sets).length > 0;
}

/**
 * A later import does not undo an earlier one's explicit value with a mere default (DeepSpeed's
 * stage 0 when the config has no zero_optimization does not cancel `--use-distributed-optimizer`);
 * two explicit values that differ are reported, and the later one wins.
 */
function merge(earlier: ImportResult[], next: ImportResult): ImportResult {
  const fields: ImportedField[] = [];
  const warnings = [...next.warnings];
  for (const f of next.fields) {
    const prev = earlier
      .flatMap((e) => e.fields.filter((x) => x.path === f.path).map((x) => ({ x, source: e.source })))
      .pop();
    if (prev && !prev.x.byDefault && f.byDefault) continue;
    if (prev && !prev.x.byDefault && !f.byDefault && prev.x.value !== f.value) {
      warnings.push(
        `${f.path}: ${prev.source} gives ${shownValue(prev.x.value)} (${prev.x.from}), ` +
          `${next.source} gives ${shownValue(f.value)} (${f.from}); using ${shownValue(f.value)}`,
      );
    }
    fields.push(f);
  }
  return { source: next.source, fields, warnings };
}

/** Field names too general to tie a message to the field that has them. */
const GENERIC_NAMES = new Set(['preset', 'nodes', 'name', 'enabled']);

/** Short field names the messages use on their own ("multiple of pp (16)", "microBatch × dp"). */
const SHORT_NAMES = new Set(['tp', 'pp', 'dp']);

/**
 * Whether a problem's message names the field at `path`: by its whole dotted path, or by its own name when that
 * is specific enough (a word of 3 or more letters, as in "pp × virtualStages", or tp, pp, dp).
 */
function namedIn(path: string, message: string): boolean {
  if (message.includes(path)) return true;
  const name = path.split('.').pop() ?? '';
  if (!(SHORT_NAMES.has(name) || /^[A-Za-z][A-Za-z0-9]{2,}$/.test(name)) || GENERIC_NAMES.has(name)) return false;
  return new RegExp(`\\b${name}\\b`).test(message);
}

/** Notes, on each problem about a field an import or `--set` gave, where its value came from. */
function annotate(
  err: InvalidScenarioError,
  source: string,
  imports: readonly ImportResult[],
  sets: readonly string[],
): InvalidScenarioError {
  const problems: Problem[] = err.problems.map((p) => {
    // The field at fault, and the fields the message names (pp × virtualStages, change training.microBatch).
    // An unknown field's message lists the allowed names, which blame nothing.
    const text = p.message.split('; allowed in ')[0];
    const named = [...imports.flatMap((imp) => imp.fields.map((f) => f.path)), ...sets.map(setPath)].filter((f) =>
      namedIn(f, text),
    );
    const paths = [...new Set([...(p.path === 'parallel' ? ['parallel.tp', 'parallel.pp'] : [p.path]), ...named])];
    const origins = [
      ...imports.flatMap((imp) =>
        imp.fields
          .filter((f) => paths.includes(f.path) && f.value !== undefined && !setBy(f.path, sets))
          .map((f) => `${f.path} ${shownValue(f.value)} from ${imp.source}: ${f.from}`),
      ),
      ...[...new Set(paths.flatMap((path) => setsNaming(path, sets)))].map((s) => `from --set ${s}`),
    ];
    return origins.length > 0 ? { path: p.path, message: `${p.message} [${origins.join('; ')}]` } : p;
  });
  return new InvalidScenarioError(source, problems);
}

/**
 * Reads a scenario file and applies the imports and `--set` overrides, in that order, then validates.
 * Without imports this is the same as reading the file with `--set`.
 * @param warn called with each import warning (prefixed by its option) as soon as it is known, so
 *   the warnings reach the user even when the scenario is then rejected
 * @throws ScenarioError for unreadable or malformed imports and every scenario problem
 */
export function scenarioWithImports(
  path: string,
  options: ImportOptions,
  sets: readonly string[] = [],
  warn: (message: string) => void = () => {},
): ScenarioWithImports {
  const file = loadScenarioFile(path);
  const imports = importsOf(file, options, sets, warn);
  const raw = applyOverrides(applyImports(file.raw, imports), sets);
  try {
    const scenario = resolveScenario(raw, file.source, file.baseDir);
    for (const w of scenario.warnings ?? []) warn(w);
    return { scenario, imports };
  } catch (err) {
    if (!(err instanceof InvalidScenarioError)) throw err;
    throw explainProblems(err, file, imports, sets);
  }
}

/** A scenario's problems with where each value came from: the import or `--set` that gave it, or the file's line. */
export function explainProblems(
  err: InvalidScenarioError,
  file: RawScenario,
  imports: readonly ImportResult[],
  sets: readonly string[],
): InvalidScenarioError {
  const annotated = imports.length > 0 || sets.length > 0 ? annotate(err, file.source, imports, sets) : err;
  return withFileLines(annotated, file.source, file.lines, (path) => givenElsewhere(path, imports, sets));
}

/** Whether `--set` or an import gave this field or a mapping that holds it (its value is then not the file's). */
export function givenElsewhere(path: string, imports: readonly ImportResult[], sets: readonly string[]): boolean {
  const over = (p: string) => p === path || path.startsWith(`${p}.`);
  return sets.some((s) => over(setPath(s))) || imports.some((imp) => imp.fields.some((f) => over(f.path)));
}

/**
 * What `--megatron-args` and `--deepspeed-config` set on a scenario file, without resolving the result (a sweep
 * resolves it at each size). Each import's warnings go to `warn` as soon as it is read.
 * @throws ScenarioError for unreadable or malformed imports
 */
export function importsOf(
  file: RawScenario,
  options: ImportOptions,
  sets: readonly string[] = [],
  warn: (message: string) => void = () => {},
): ImportResult[] {
  const imports: ImportResult[] = [];
  const add = (result: ImportResult) => {
    const base = applyImports(file.raw, imports);
    const merged = merge(imports, result);
    // A removal of a field the scenario does not have is no news.
    merged.fields = merged.fields.filter((f) => f.value !== undefined || get(base, f.path) !== undefined);
    imports.push(merged);
    for (const w of importWarnings([merged])) warn(w);
  };
  if (options.megatronArgs !== undefined) {
    const arg = options.megatronArgs;
    const text = arg.startsWith('@') ? readText(arg.slice(1), 'Megatron arguments file') : arg;
    add(importMegatronArgs(text, megatronContext(applyOverrides(file.raw, sets), file.source, file.baseDir)));
  }
  if (options.deepspeedConfig !== undefined) {
    const text = readText(options.deepspeedConfig, 'DeepSpeed config');
    const context = deepSpeedContext(applyOverrides(applyImports(file.raw, imports), sets), file.source, file.baseDir);
    add(importDeepSpeedConfig(text, options.deepspeedConfig, context));
  }
  return imports;
}

/**
 * The imports for `simulate --json`: per option, each field it set (`value` null where it removed one so the
 * default applies; `byDefault` for the framework's default; `overriddenBySet` where `--set` had the last word)
 * and its warnings.
 */
export function importsJson(imports: readonly ImportResult[], sets: readonly string[] = []): Record<string, unknown>[] {
  return imports.map((imp, i) => ({
    source: imp.source,
    fields: imp.fields.map((f) => {
      const later = overridingImport(imports, i, f);
      return {
        path: f.path,
        value: f.value ?? null,
        from: f.from,
        byDefault: !!f.byDefault,
        overriddenBySet: setBy(f.path, sets),
        ...(later ? { overriddenBy: later } : {}),
      };
    }),
    warnings: imp.warnings,
  }));
}

/** The later import (its option) that set field `f` of import `i` to another value, if any. */
function overridingImport(imports: readonly ImportResult[], i: number, f: ImportedField): string | undefined {
  return imports.slice(i + 1).find((x) => x.fields.some((g) => g.path === f.path && g.value !== f.value))?.source;
}

/** All warnings of the imports, each prefixed by its option. */
export function importWarnings(imports: readonly ImportResult[]): string[] {
  return imports.flatMap((imp) => imp.warnings.map((w) => `${imp.source}: ${w}`));
}

/**
 * Lines for the summary: which scenario fields each import set, grouped by section; `*` marks the
 * framework's default where the input was silent, and fields that a later import or `--set` overrode are marked so.
 */
export function describeImports(imports: readonly ImportResult[], sets: readonly string[] = []): string[] {
  const lines: string[] = [];
  for (const [i, imp] of imports.entries()) {
    if (imp.fields.length === 0) continue;
    const framework = imp.source === '--megatron-args' ? 'Megatron' : 'DeepSpeed';
    lines.push('', `  taken from ${imp.source} (* = ${framework}'s default where the input is silent):`);
    const sections = new Map<string, string[]>(['model', 'training', 'parallel'].map((s) => [s, []]));
    for (const f of imp.fields) {
      const [section, ...rest] = f.path.split('.');
      const value = f.value === undefined ? 'derived' : shownValue(f.value);
      const later = overridingImport(imports, i, f);
      const overridden = setBy(f.path, sets) ? ' (overridden by --set)' : later ? ` (overridden by ${later})` : '';
      const item = `${rest.join('.')} ${value}${f.byDefault ? '*' : ''}${overridden}`;
      sections.set(section, [...(sections.get(section) ?? []), item]);
    }
    for (const [section, items] of sections)
      if (items.length > 0) lines.push(...wrap(`    ${section.padEnd(9)} `, items, 110));
  }
  return lines;
}

function wrap(head: string, items: string[], width: number): string[] {
  const out: string[] = [];
  let line = head;
  for (const [i, item] of items.entries()) {
    const piece = item + (i < items.length - 1 ? ',' : '');
    if (line.length + piece.length + 1 > width && line.trim().length > 0 && line !== head) {
      out.push(line.trimEnd());
      line = ' '.repeat(head.length);
    }
    line += (line.endsWith(' ') ? '' : ' ') + piece;
  }
  out.push(line.trimEnd());
  return out;
}
