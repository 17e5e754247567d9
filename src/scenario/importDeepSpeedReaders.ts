import type { Problem } from './errors.js';

/**
 * Reading the values of a DeepSpeed config without stopping at the first bad one: each reader returns the value,
 * or undefined when the field is absent, `"auto"` or malformed, and a malformed field becomes a problem (where it
 * is, what was found, what is allowed) so that the import can report every one of them at once.
 */

export type Json = Record<string, unknown>;

export interface Readers {
  /** A positive whole number (DeepSpeed configs write sizes as 5e8, which JSON reads as a number). */
  posInt(field: string, v: unknown): number | undefined;
  /** A whole number ≥ 0 (DeepSpeed's `Field(..., ge=0)` counts: thresholds, prefetch sizes). */
  count(field: string, v: unknown): number | undefined;
  bool(field: string, v: unknown): boolean | undefined;
  /** A nested mapping (`zero_optimization`, `fp16`, …). */
  section(field: string, v: unknown): Json | undefined;
  /** Whether the value is `"auto"`; remembers the field as one the Hugging Face Trainer fills in. */
  auto(field: string, v: unknown): boolean;
  /** Marks an `"auto"` field as dealt with: filled in by the import, or explained in a warning of its own. */
  filled(field: string): void;
  /** Records a problem with a field. */
  problem(field: string, message: string): void;
  /** Whether a problem was recorded for this field. */
  isBad(field: string): boolean;
  /** The problems so far, in the order they were found. */
  readonly problems: readonly Problem[];
  /** The fields that were `"auto"`, and of those the ones the import filled in. */
  readonly autos: readonly string[];
  readonly filledIn: ReadonlySet<string>;
}

const shown = (v: unknown) => JSON.stringify(v);

/** Fresh readers with no problems, autos or filled-in fields yet. */
export function deepSpeedReaders(): Readers {
  const problems: Problem[] = [];
  const autos: string[] = [];
  const filledIn = new Set<string>();
  const r: Readers = {
    problems,
    autos,
    filledIn,
    problem: (field, message) => {
      problems.push({ path: field, message });
    },
    isBad: (field) => problems.some((p) => p.path === field),
    auto: (field, v) => {
      if (v === 'auto' && !autos.includes(field)) autos.push(field);
      return v === 'auto';
    },
    filled: (field) => {
      filledIn.add(field);
    },
    posInt: (field, v) => {
      if (v === undefined || v === null || r.auto(field, v)) return undefined;
      if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
        r.problem(field, `expected a positive whole number or "auto", got ${shown(v)}`);
        return undefined;
      }
      return v;
    },
    count: (field, v) => {
      if (v === undefined || v === null || r.auto(field, v)) return undefined;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
        r.problem(field, `expected a whole number ≥ 0 or "auto", got ${shown(v)}`);
        return undefined;
      }
      return v;
    },
    bool: (field, v) => {
      if (v === undefined || v === null || r.auto(field, v)) return undefined;
      if (typeof v !== 'boolean') {
        r.problem(field, `expected true, false or "auto", got ${shown(v)}`);
        return undefined;
      }
      return v;
    },
    section: (field, v) => {
      if (v === undefined || v === null) return undefined;
      if (typeof v !== 'object' || Array.isArray(v)) {
        r.problem(field, `expected a mapping ({ ... }), got ${shown(v)}`);
        return undefined;
      }
      return v as Json;
    },
  };
  return r;
}
