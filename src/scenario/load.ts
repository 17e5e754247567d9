import { readFileSync } from 'node:fs';
import { fileErrorReason } from '../fileErrors.js';
import { dirname, resolve } from 'node:path';
import { parse, YAMLParseError } from 'yaml';
import { ScenarioError } from '../sim/errors.js';

/** A scenario file as read from disk, before validation. */
export interface RawScenario {
  raw: unknown;
  /** The file's path as given, for messages. */
  source: string;
  /** Folder the file is in: relative paths inside the scenario (hfConfig) start there. */
  baseDir: string;
}

/** ` at line L, column C: what` from a YAML parse error, without the source excerpt the parser appends. */
function yamlProblem(err: YAMLParseError): string {
  const at = err.linePos ? ` at line ${err.linePos[0].line}, column ${err.linePos[0].col}` : '';
  const what = err.message.split('\n')[0].replace(/ at line \d+, column \d+:?\s*$/, '');
  return `${at}: ${what}`;
}

/** Reads a YAML or JSON file (YAML is a superset of JSON). */
export function readStructuredFile(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const why = fileErrorReason(err);
    const full = resolve(path);
    throw new ScenarioError('', `cannot read ${what} '${path}'${full !== path ? ` (${full})` : ''}: ${why}`);
  }
  try {
    return parse(text);
  } catch (err) {
    if (err instanceof YAMLParseError) throw new ScenarioError('', `${what} '${path}' is not valid YAML/JSON${yamlProblem(err)}`);
    throw err;
  }
}

export function loadScenarioFile(path: string): RawScenario {
  const raw = readStructuredFile(path, 'scenario file');
  if (raw === null || raw === undefined || typeof raw !== 'object' || Array.isArray(raw)) {
    const found = raw === null || raw === undefined ? 'it is empty' : Array.isArray(raw) ? 'it holds a list' : `it holds the ${typeof raw} ${JSON.stringify(raw)}`;
    throw new ScenarioError('', `scenario file '${path}' must hold a mapping of fields (cluster, model, training, and optionally name, description, seed, parallel, comm), but ${found}`);
  }
  return { raw, source: path, baseDir: dirname(resolve(path)) };
}

/**
 * Applies `--set path=value` overrides to a raw scenario. The value is read as YAML, so numbers,
 * booleans and lists come out typed (`parallel.ddp.bucketMB=5`, `comm.mode=step`).
 */
export function applyOverrides(raw: unknown, sets: readonly string[]): unknown {
  const root = structuredClone(raw) as Record<string, unknown>;
  for (const s of sets) {
    const eq = s.indexOf('=');
    const path = eq < 0 ? '' : s.slice(0, eq).trim();
    const keys = path.split('.').map((k) => k.trim());
    if (eq < 0 || keys.some((k) => k === '')) {
      throw new ScenarioError('', `--set '${s}': expected path=value with a dotted field path, e.g. --set parallel.ddp.bucketMB=5 or --set cluster.preset=dgx-h100`);
    }
    let value: unknown;
    try {
      value = parse(s.slice(eq + 1));
    } catch (err) {
      if (err instanceof YAMLParseError) throw new ScenarioError('', `--set '${s}': the value '${s.slice(eq + 1)}' is not valid YAML${yamlProblem(err)}; quote it to set text`);
      throw err;
    }
    let obj = root;
    for (let i = 0; i < keys.length - 1; i++) {
      const next = obj[keys[i]];
      if (next === undefined || next === null) obj[keys[i]] = {};
      else if (typeof next !== 'object' || Array.isArray(next)) {
        const at = keys.slice(0, i + 1).join('.');
        throw new ScenarioError('', `--set '${s}': '${at}' is ${JSON.stringify(next)}, not a mapping, so it has no field '${keys[i + 1]}'`);
      }
      obj = obj[keys[i]] as Record<string, unknown>;
    }
    obj[keys[keys.length - 1]] = value;
  }
  return root;
}
