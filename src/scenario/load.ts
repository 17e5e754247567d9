import { fileErrorReason } from '../fileErrors.js';
import { dirname, resolve } from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument, YAMLParseError, type Document, type Node } from 'yaml';
import { ScenarioError } from '../sim/errors.js';
import { scenarioSchema } from './schema.js';
import { readInputText } from '../inputFile.js';

/** A scenario file as read from disk, before validation. */
export interface RawScenario {
  raw: unknown;
  /** The file's path as given, for messages. */
  source: string;
  /** Folder the file is in: relative paths inside the scenario (hfConfig) start there. */
  baseDir: string;
  /** Line (from 1) of each field's key in the file, by dotted path; for messages. */
  lines?: ReadonlyMap<string, number>;
}

/** ` at line L, column C: what` from a YAML parse error, without the source excerpt the parser appends. */
function yamlProblem(err: YAMLParseError): string {
  const at = err.linePos ? ` at line ${err.linePos[0].line}, column ${err.linePos[0].col}` : '';
  // The library's words for a second document name one of its calls: say what the file holds instead.
  if (err.code === 'MULTIPLE_DOCS')
    return (
      `${at}: the file holds more than one YAML document (a '---' line starts another); ` + 'a scenario is one document'
    );
  const what = err.message.split('\n')[0].replace(/ at line \d+, column \d+:?\s*$/, '');
  return `${at}: ${what}`;
}

/**
 * The plain value of a parsed YAML document. Aliases are expanded here, which is where the library finds an alias
 * that names no anchor and one that expands to too many copies (an "alias bomb"): both come back as the words of a
 * problem, for the caller's message, instead of as the library's exception.
 */
function yamlValue(doc: Document): { value: unknown } | { problem: string } {
  try {
    return { value: doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }) };
  } catch (err) {
    const message = (err as Error).message;
    const unresolved = /^Unresolved alias.*: (.*)$/.exec(message);
    if (unresolved)
      return {
        problem:
          `the alias *${unresolved[1]} names no anchor: an anchor (&${unresolved[1]}) ` +
          'must be set before the alias that uses it',
      };
    if (/alias count/i.test(message))
      return {
        problem:
          `its aliases expand to too many copies (more than ${MAX_YAML_ALIASES} per alias, ` +
          'as a YAML "alias bomb" does); write the values out',
      };
    throw err;
  }
}

/** The most copies one YAML alias may expand to (the library's default, named here for the message). */
const MAX_YAML_ALIASES = 100;

/** The line of every mapping key under `node`, by dotted path (lists are not entered). */
function keyLines(
  node: Node | null | undefined,
  counter: LineCounter,
  prefix: string,
  out: Map<string, number>,
): Map<string, number> {
  if (!isMap(node)) return out;
  for (const pair of node.items) {
    const key = pair.key as Node | null;
    if (!isScalar(key) || key.range === undefined || key.range === null) continue;
    const path = prefix === '' ? String(key.value) : `${prefix}.${String(key.value)}`;
    out.set(path, counter.linePos(key.range[0]).line);
    keyLines(pair.value as Node | null, counter, path, out);
  }
  return out;
}

/** A YAML or JSON file (YAML is a superset of JSON) and the line of each of its mapping keys. */
function readStructured(path: string, what: string): { value: unknown; lines: Map<string, number> } {
  let text: string;
  try {
    text = readInputText(path);
  } catch (err) {
    const why = fileErrorReason(err);
    const full = resolve(path);
    throw new ScenarioError('', `cannot read ${what} '${path}'${full !== path ? ` (${full})` : ''}: ${why}`);
  }
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false });
  const [first] = doc.errors;
  if (first) {
    if (first instanceof YAMLParseError) {
      first.linePos ??= [counter.linePos(first.pos[0]), counter.linePos(first.pos[1])];
      throw new ScenarioError('', `${what} '${path}' is not valid YAML/JSON${yamlProblem(first)}`);
    }
    throw first;
  }
  const plain = yamlValue(doc);
  if ('problem' in plain) throw new ScenarioError('', `${what} '${path}' is not valid YAML/JSON: ${plain.problem}`);
  return { value: plain.value, lines: keyLines(doc.contents, counter, '', new Map()) };
}

/** Reads a YAML or JSON file (YAML is a superset of JSON). */
export function readStructuredFile(path: string, what: string): unknown {
  return readStructured(path, what).value;
}

export function loadScenarioFile(path: string): RawScenario {
  const { value: raw, lines } = readStructured(path, 'scenario file');
  if (raw === null || raw === undefined || typeof raw !== 'object' || Array.isArray(raw)) {
    const found =
      raw === null || raw === undefined
        ? 'it is empty'
        : Array.isArray(raw)
          ? 'it holds a list'
          : `it holds the ${typeof raw} ${JSON.stringify(raw)}`;
    const optional = Object.keys(scenarioSchema.shape).filter((k) => !['cluster', 'model', 'training'].includes(k));
    throw new ScenarioError(
      '',
      `scenario file '${path}' must hold a mapping of fields (cluster, model, training, ` +
        `and optionally ${optional.join(', ')}), but ${found}`,
    );
  }
  return { raw, source: path, baseDir: dirname(resolve(path)), lines };
}

/** Keys that are not fields but the machinery of every JavaScript object; a `--set` path may not name them. */
const OBJECT_BUILTIN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Applies `--set path=value` overrides to a raw scenario. The value is read as YAML, so numbers,
 * booleans and lists come out typed (`parallel.ddp.bucketMB=5`, `comm.mode=step`); `null` (or `~`) removes the field.
 * An element of a list is named by its index (`parallel.layersPerStage.0=11`).
 */
export function applyOverrides(raw: unknown, sets: readonly string[]): unknown {
  const root = structuredClone(raw) as Record<string, unknown>;
  for (const s of sets) {
    const eq = s.indexOf('=');
    const path = eq < 0 ? '' : s.slice(0, eq).trim();
    const keys = path.split('.').map((k) => k.trim());
    if (eq < 0 || keys.some((k) => k === '')) {
      throw new ScenarioError(
        '',
        `--set '${s}': expected path=value with a dotted field path, e.g. ` +
          '--set parallel.ddp.bucketMB=5 or --set cluster.preset=dgx-h100',
      );
    }
    // Names every JavaScript object answers to: setting them would change all objects, not a scenario field.
    const builtin = keys.find((k) => OBJECT_BUILTIN_KEYS.has(k));
    if (builtin !== undefined)
      throw new ScenarioError(
        '',
        `--set '${s}': '${builtin}' is not a scenario field (no scenario has a field of that name)`,
      );
    const doc = parseDocument(s.slice(eq + 1), { prettyErrors: false });
    const [error] = doc.errors;
    if (error)
      throw new ScenarioError(
        '',
        `--set '${s}': the value '${s.slice(eq + 1)}' is not valid YAML${yamlProblem(error)}; quote it to set text`,
      );
    const plain = yamlValue(doc);
    if ('problem' in plain)
      throw new ScenarioError(
        '',
        `--set '${s}': the value '${s.slice(eq + 1)}' is not valid YAML: ${plain.problem}; quote it to set text`,
      );
    const value = plain.value;
    let obj = root;
    for (let i = 0; i < keys.length - 1; i++) {
      const next = Object.hasOwn(obj, keys[i]) ? obj[keys[i]] : undefined;
      // A list's element is named by its index (parallel.layersPerStage.0=20, comm.measured.1.file=x.txt).
      const index = Array.isArray(next) && /^\d+$/.test(keys[i + 1]) ? Number(keys[i + 1]) : undefined;
      if (Array.isArray(next) && (index === undefined || index >= next.length)) {
        const at = keys.slice(0, i + 1).join('.');
        throw new ScenarioError(
          '',
          `--set '${s}': '${at}' is a list of ${next.length}, so '${keys[i + 1]}' names no element of it; ` +
            `${next.length > 0 ? `use an index from 0 to ${next.length - 1}, or ` : ''}give the whole list: ` +
            `--set '${at}=[...]'`,
        );
      }
      if (next === undefined || next === null) obj[keys[i]] = {};
      else if (typeof next !== 'object') {
        const at = keys.slice(0, i + 1).join('.');
        // A preset named by a string (cluster.gpu: a100-sxm4-80gb) takes fields in its mapping form.
        const field = keys.slice(i + 1);
        const asMapping =
          typeof next === 'string' && field.length === 1 && value !== null
            ? `; to change one field of it, give the mapping form: --set '${at}={preset: ${next}, ${field[0]}: ` +
              `${s.slice(eq + 1)}}'`
            : '';
        throw new ScenarioError(
          '',
          `--set '${s}': '${at}' is ${JSON.stringify(next)}, not a mapping, ` +
            `so it has no field '${keys[i + 1]}'${asMapping}`,
        );
      }
      obj = obj[keys[i]] as Record<string, unknown>;
    }
    // A written `null` (or `~`) takes the field out, so that a file's value can be left to its default
    // (--set parallel.dp=null). An empty value, as an unset shell variable gives, stays an error.
    if (value === null && s.slice(eq + 1).trim() !== '') {
      if (Array.isArray(obj)) obj.splice(Number(keys[keys.length - 1]), 1);
      else delete obj[keys[keys.length - 1]];
    } else obj[keys[keys.length - 1]] = value;
  }
  return root;
}
