import type { ZodError, ZodIssue, ZodTypeAny } from 'zod';
import type { Problem } from './errors.js';
import { closest } from '../sim/closestName.js';

/**
 * Turning zod's issues into messages a user can act on: each names the field (dotted path), what is
 * allowed there (read from the schema, so it cannot drift from it) and what was found.
 */

/** zod's internal definition, read only to describe what a field allows. */
interface Def {
  typeName?: string;
  description?: string;
  innerType?: ZodTypeAny;
  schema?: ZodTypeAny;
  type?: ZodTypeAny;
  options?: ZodTypeAny[];
  values?: readonly unknown[];
  value?: unknown;
  checks?: { kind: string; value?: number; inclusive?: boolean }[];
  minLength?: { value: number } | null;
  shape?: () => Record<string, ZodTypeAny>;
}

function def(schema: ZodTypeAny): Def {
  return (schema as unknown as { _def: Def })._def;
}

/** Strips optional/default/nullable/effects wrappers, keeping the first description found on the way. */
function unwrap(schema: ZodTypeAny): { inner: ZodTypeAny; description?: string } {
  let s = schema;
  let description = def(s).description;
  for (;;) {
    const d = def(s);
    const next =
      d.typeName === 'ZodOptional' || d.typeName === 'ZodDefault' || d.typeName === 'ZodNullable'
        ? d.innerType
        : d.typeName === 'ZodEffects'
          ? d.schema
          : undefined;
    if (!next) return { inner: s, description };
    s = next;
    description ??= def(s).description;
  }
}

function fieldsOf(schema: ZodTypeAny): string[] | undefined {
  const { inner } = unwrap(schema);
  const d = def(inner);
  if (d.typeName === 'ZodObject' && d.shape) return Object.keys(d.shape());
  if (d.typeName === 'ZodUnion')
    for (const o of d.options ?? []) {
      const f = fieldsOf(o);
      if (f) return f;
    }
  return undefined;
}

/** A number schema in words, with its bounds: `a whole number > 0`, `a number > 0 and ≤ 1`. */
function numberExpectation(d: Def): string {
  const checks = d.checks ?? [];
  const bounds = checks
    .filter((c) => c.kind === 'min' || c.kind === 'max')
    .map((c) => `${c.kind === 'min' ? (c.inclusive ? '≥' : '>') : c.inclusive ? '≤' : '<'} ${c.value}`);
  const kind = checks.some((c) => c.kind === 'int') ? 'a whole number' : 'a number';
  return `${kind}${bounds.length ? ` ${bounds.join(' and ')}` : ''}`;
}

/**
 * In words, what a schema accepts: `a whole number > 0`, `one of 'bf16', 'fp16'`, `true or false`. A described
 * field gives its description; a described number keeps its bounds in front, since the description says what
 * the number means but not which values are allowed.
 */
export function expectation(schema: ZodTypeAny): string {
  const { inner, description } = unwrap(schema);
  const d = def(inner);
  if (description) return d.typeName === 'ZodNumber' ? `${numberExpectation(d)} (${description})` : description;
  switch (d.typeName) {
    case 'ZodNumber':
      return numberExpectation(d);
    case 'ZodString':
      return 'text';
    case 'ZodBoolean':
      return 'true or false';
    case 'ZodEnum':
      return `one of ${(d.values ?? []).map((v) => `'${String(v)}'`).join(', ')}`;
    case 'ZodLiteral':
      return JSON.stringify(d.value);
    case 'ZodUnion': {
      const opts = d.options ?? [];
      if (opts.every((o) => def(unwrap(o).inner).typeName === 'ZodLiteral'))
        return `one of ${opts.map((o) => JSON.stringify(def(unwrap(o).inner).value)).join(', ')}`;
      return opts.map(expectation).join(' or ');
    }
    case 'ZodObject':
      return `a mapping with fields ${fieldsOf(inner)!.join(', ')}`;
    case 'ZodArray': {
      const min = d.minLength?.value;
      return `a list${min ? ` of at least ${min} entries` : ''}, each ${expectation(d.type!)}`;
    }
    default:
      return 'something else';
  }
}

/** The schema of the field at `path` under `schema`, if the schema has one there. */
export function schemaAt(schema: ZodTypeAny, path: readonly (string | number)[]): ZodTypeAny | undefined {
  if (path.length === 0) return schema;
  const { inner } = unwrap(schema);
  const d = def(inner);
  const [key, ...rest] = path;
  if (d.typeName === 'ZodObject' && d.shape) {
    const child = d.shape()[String(key)];
    return child ? schemaAt(child, rest) : undefined;
  }
  if (d.typeName === 'ZodArray' && d.type) return schemaAt(d.type, rest);
  if (d.typeName === 'ZodUnion') {
    for (const o of d.options ?? []) {
      const found = schemaAt(o, path);
      if (found) return found;
    }
  }
  return undefined;
}

function valueAt(input: unknown, path: readonly (string | number)[]): unknown {
  let v = input;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** A value as found in the file, for `got ...`. */
export function shown(value: unknown): string {
  if (value === null) return 'nothing (null)';
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') {
    const hint = value.trim() !== '' && !Number.isNaN(Number(value)) ? '; write numbers without quotes' : '';
    return `'${value}' (text${hint})`;
  }
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return String(value);
}

interface Context {
  schema?: ZodTypeAny;
  input?: unknown;
}

interface Draft extends Problem {
  /** Set on `is required` problems, so a typo of the same field can absorb them. */
  required?: boolean;
  /** For unknown fields: the path of the field it probably meant. */
  meant?: string;
  /** For unknown fields: the fields allowed in its place. */
  allowedText?: string;
}

function join(prefix: string, path: readonly (string | number)[]): string {
  return [prefix, ...path.map(String)].filter((s) => s !== '').join('.');
}

/** For a preset's name where only a mapping is taken (`cluster: dgx-h100`): how to write it. */
function presetHint(field: ZodTypeAny | undefined, value: unknown, path: string): string {
  const fields = field ? fieldsOf(field) : undefined;
  return typeof value === 'string' && fields?.includes('preset')
    ? `; to name a preset write ${path}: { preset: ${value} }`
    : '';
}

function drafts(issue: ZodIssue, prefix: string, ctx: Context): Draft[] {
  const field = ctx.schema ? schemaAt(ctx.schema, issue.path) : undefined;
  const expected = field ? expectation(field) : undefined;
  const got = shown(valueAt(ctx.input, issue.path));
  const path = join(prefix, issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.received === 'undefined')
        return [{ path, message: `is required; expected ${expected ?? issue.expected}`, required: true }];
      if (issue.expected === 'integer')
        return [{ path, message: `expected ${expected ?? 'a whole number'}, got ${got}` }];
      return [
        {
          path,
          message:
            `expected ${expected ?? issue.expected}, got ${ctx.input === undefined ? issue.received : got}` +
            `${presetHint(field, valueAt(ctx.input, issue.path), path)}`,
        },
      ];
    case 'invalid_enum_value':
      return [
        {
          path,
          message:
            `expected one of ${issue.options.map((o) => `'${String(o)}'`).join(', ')}, ` +
            `got '${String(issue.received)}'`,
        },
      ];
    case 'invalid_literal':
      return [{ path, message: `expected ${expected ?? JSON.stringify(issue.expected)}, got ${got}` }];
    case 'unrecognized_keys': {
      const parent = ctx.schema ? schemaAt(ctx.schema, issue.path) : undefined;
      const allowed = parent ? (fieldsOf(parent) ?? []) : [];
      return issue.keys.map((key) => {
        const meant = closest(key, allowed);
        const where = issue.path.length || prefix ? `in ${join(prefix, issue.path)}` : 'at the top level';
        const list = allowed.length ? `; allowed ${where}: ${allowed.join(', ')}` : '';
        return {
          path: join(prefix, [...issue.path, key]),
          message: `unknown field${meant ? ` (did you mean '${meant}'?)` : ''}`,
          meant: meant ? join(prefix, [...issue.path, meant]) : undefined,
          allowedText: list,
        };
      });
    }
    case 'too_small':
    case 'too_big':
    case 'not_finite':
      if (issue.code !== 'not_finite' && issue.type === 'array') {
        const found = valueAt(ctx.input, issue.path);
        if (expected && Array.isArray(found))
          return [{ path, message: `expected ${expected}, got a list of ${found.length}` }];
        return [
          {
            path,
            message:
              `needs ${issue.code === 'too_small' ? 'at least' : 'at most'} ` +
              `${issue.code === 'too_small' ? issue.minimum : issue.maximum} entries`,
          },
        ];
      }
      if (expected) return [{ path, message: `expected ${expected}, got ${got}` }];
      if (issue.code === 'too_small' && issue.type === 'number')
        return [{ path, message: `must be ${issue.inclusive ? '≥' : '>'} ${issue.minimum}` }];
      if (issue.code === 'too_big' && issue.type === 'number')
        return [{ path, message: `must be ${issue.inclusive ? '≤' : '<'} ${issue.maximum}` }];
      return [{ path, message: issue.message }];
    case 'invalid_union': {
      // A branch that got past the type check says more than "wrong type" does: report its issues.
      const inner = issue.unionErrors.flatMap((e) => e.issues).filter((i) => i.code !== 'invalid_type');
      if (inner.length > 0) return drafts(inner[0], prefix, ctx);
      return [{ path, message: `expected ${expected ?? 'a preset name or a mapping of fields'}, got ${got}` }];
    }
    default:
      return [{ path, message: issue.message }];
  }
}

/**
 * Turns zod's issues into one problem per issue, with a dotted path. With the schema and the input it
 * says what the field allows and what was found. An unknown field that is a typo of a missing required
 * one (`trainin:` for `training:`) is reported once, as the typo.
 */
export function zodProblems(error: ZodError, prefix = '', ctx: Context = {}): Problem[] {
  const all = error.issues.flatMap((issue) => drafts(issue, prefix, ctx));
  const typoed = new Set(all.filter((p) => p.meant !== undefined).map((p) => p.meant!));
  return all
    .filter((p) => !(p.required && typoed.has(p.path)))
    .map((p) => ({
      path: p.path,
      message:
        p.message.replace(
          /\?\)$/,
          p.meant && all.some((q) => q.required && q.path === p.meant) ? '? it is required and missing)' : '?)',
        ) + (p.allowedText ?? ''),
    }));
}
