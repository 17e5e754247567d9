import { readFileSync } from 'node:fs';
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

/** Reads a YAML or JSON file (YAML is a superset of JSON). */
export function readStructuredFile(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : code ?? String(err);
    throw new ScenarioError('', `cannot read ${what} '${path}': ${why}`);
  }
  try {
    return parse(text);
  } catch (err) {
    if (err instanceof YAMLParseError) {
      const at = err.linePos ? ` at line ${err.linePos[0].line}, column ${err.linePos[0].col}` : '';
      throw new ScenarioError('', `${what} '${path}' is not valid YAML/JSON${at}: ${err.message.split('\n')[0]}`);
    }
    throw err;
  }
}

export function loadScenarioFile(path: string): RawScenario {
  const raw = readStructuredFile(path, 'scenario file');
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ScenarioError('', `scenario file '${path}' must hold a mapping of fields (cluster, model, training, ...), not ${raw === null ? 'nothing' : Array.isArray(raw) ? 'a list' : typeof raw}`);
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
    if (eq <= 0) throw new ScenarioError('', `--set '${s}' must look like path=value, e.g. parallel.ddp.bucketMB=5`);
    const path = s.slice(0, eq).trim();
    const value: unknown = parse(s.slice(eq + 1));
    const keys = path.split('.');
    let obj = root;
    for (let i = 0; i < keys.length - 1; i++) {
      const next = obj[keys[i]];
      if (next === undefined || next === null) obj[keys[i]] = {};
      else if (typeof next !== 'object' || Array.isArray(next)) throw new ScenarioError(path, `--set cannot go inside '${keys.slice(0, i + 1).join('.')}', which is not a mapping`);
      obj = obj[keys[i]] as Record<string, unknown>;
    }
    obj[keys[keys.length - 1]] = value;
  }
  return root;
}
