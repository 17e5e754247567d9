/**
 * What an importer of real framework settings (`--megatron-args`, `--deepspeed-config`) produces:
 * scenario fields as `--set`-style overrides, each with where it came from, plus warnings. They are
 * applied to the raw scenario after the file and before `--set`, so they go through the same
 * validation as the scenario itself.
 */

/** A value a scenario field can take from an import: a scalar, or a list of counts (`parallel.layersPerStage`). */
export type ImportedValue = string | number | boolean | readonly number[];

/** One scenario field set (or removed) by an import. */
export interface ImportedField {
  /** Dotted scenario path, as `--set` takes it (`parallel.tp`). */
  path: string;
  /**
   * The value; `undefined` removes the field so the scenario's default applies (Megatron derives
   * the data-parallel size from the world size, so an import drops a `parallel.dp` the file gave).
   */
  value: ImportedValue | undefined;
  /** The flag or field it was read from (`--tensor-model-parallel-size 8`, `zero_optimization.stage`). */
  from: string;
  /** The framework's own default, applied because the input did not say (shown as such). */
  byDefault?: boolean;
}

/** The result of one importer. */
export interface ImportResult {
  /** Which option it came from: `--megatron-args` or `--deepspeed-config`. */
  source: string;
  fields: ImportedField[];
  /** Unknown flags/fields, settings that are not modelled, and approximations; printed on stderr. */
  warnings: string[];
}

/** The value as `--set` reads it (YAML): numbers and booleans bare, text quoted, a list in brackets. */
export function yamlScalar(value: ImportedValue): string {
  if (Array.isArray(value)) return `[${value.join(', ')}]`;
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * The value as messages show it: fractions to three decimals (a bucket of 5e8 elements is 953.674 MiB), the rest as is.
 */
export function shownValue(value: ImportedValue | undefined): string {
  if (Array.isArray(value)) return `[${value.join(', ')}]`;
  return typeof value === 'number' && !Number.isInteger(value) ? String(Number(value.toFixed(3))) : String(value);
}

/** The fields that set a value, as `--set path=value` strings. */
export function toSetArgs(fields: readonly ImportedField[]): string[] {
  return fields.filter((f) => f.value !== undefined).map((f) => `${f.path}=${yamlScalar(f.value!)}`);
}

/** Collects fields and warnings while an importer reads its input. */
export class ImportCollector {
  readonly fields: ImportedField[] = [];
  readonly warnings: string[] = [];

  set(path: string, value: ImportedValue | undefined, from: string, byDefault = false): void {
    const i = this.fields.findIndex((f) => f.path === path);
    const field: ImportedField = byDefault ? { path, value, from, byDefault } : { path, value, from };
    if (i >= 0) this.fields[i] = field;
    else this.fields.push(field);
  }

  warn(message: string): void {
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }

  result(source: string): ImportResult {
    return { source, fields: this.fields, warnings: this.warnings };
  }
}
