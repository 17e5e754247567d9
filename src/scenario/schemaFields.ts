import { z } from 'zod';

/**
 * Every field of a scenario as the schema defines it: its path, the values it takes and its default, for the field
 * table of docs/scenarios.md (`npm run docs:fields` writes it, and a test keeps the page in step with the schema).
 */
export interface SchemaField {
  path: string;
  /** What the field takes, in words: `integer > 0`, `gpipe | 1f1b | interleaved`, `list of integer > 0`. */
  takes: string;
  /** The default as YAML would write it; absent when the field has none (optional, or required). */
  default?: string;
}

type AnyZod = z.ZodTypeAny;

/** The schema under ZodDefault / ZodOptional / ZodNullable / ZodEffects wrappers, and the default they give. */
function unwrap(schema: AnyZod): { inner: AnyZod; defaultValue?: unknown } {
  let s = schema;
  let defaultValue: unknown;
  for (;;) {
    if (s instanceof z.ZodDefault) {
      defaultValue ??= s._def.defaultValue();
      s = s._def.innerType;
    } else if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s._def.innerType;
    else if (s instanceof z.ZodEffects) s = s._def.schema;
    else return { inner: s, defaultValue };
  }
}

/** A number in exponent form, as YAML and JavaScript read it: 5e7. */
const exponentText = (n: number) => n.toExponential().replace('e+', 'e');

/** A number as a reader writes it: 5e7 for a large round one, 1,000 with separators, else as it is. */
export function numberText(n: number): string {
  if (Math.abs(n) >= 1e6 && Number.isInteger(n)) return exponentText(n);
  return Math.abs(n) >= 1e4 ? n.toLocaleString('en-US') : String(n);
}

/** A number's constraints in words: integer or number, and its bounds (`0.01 to 1e6`, `> 0`, `≥ 0`). */
function numberWords(s: z.ZodNumber): string {
  let kind = 'number';
  let min: { value: number; inclusive: boolean } | undefined;
  let max: { value: number; inclusive: boolean } | undefined;
  for (const c of s._def.checks) {
    if (c.kind === 'int') kind = 'integer';
    else if (c.kind === 'min') min = c;
    else if (c.kind === 'max') max = c;
  }
  if (min && max && min.inclusive && max.inclusive)
    return `${kind}, ${numberText(min.value)} to ${numberText(max.value)}`;
  const bounds = [
    min && `${min.inclusive ? '≥' : '>'} ${numberText(min.value)}`,
    max && `${max.inclusive ? '≤' : '<'} ${numberText(max.value)}`,
  ].filter(Boolean);
  return [kind, ...bounds].join(' ');
}

/** What a leaf schema takes, in words. */
export function takesWords(schema: AnyZod): string {
  const { inner: s } = unwrap(schema);
  if (s instanceof z.ZodNumber) return numberWords(s);
  if (s instanceof z.ZodBoolean) return 'true | false';
  if (s instanceof z.ZodString) return 'text';
  if (s instanceof z.ZodEnum) return (s._def.values as string[]).join(' | ');
  if (s instanceof z.ZodLiteral) return JSON.stringify(s._def.value);
  if (s instanceof z.ZodArray) return `list of ${takesWords(s._def.type)}`;
  if (s instanceof z.ZodUnion) return (s._def.options as AnyZod[]).map(takesWords).join(' | ');
  if (s instanceof z.ZodRecord) return `mapping of ${takesWords(s._def.valueType)}`;
  if (s instanceof z.ZodObject) return 'mapping';
  return 'value';
}

function defaultWords(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0)
    return undefined;
  // As a scenario would write it: 1e5 for a round power, the digits otherwise (no separators: YAML reads 1,000 as
  // text).
  if (typeof value === 'number')
    return Number.isInteger(value) && value >= 1e4 && /^[1-9]0+$/.test(String(value))
      ? exponentText(value)
      : String(value);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The fields under `schema` at `prefix`, depth first in the schema's order: an object's fields are listed one by one,
 * and a union that may be a mapping (a preset name or an inline GPU) lists the mapping's fields under the same path.
 */
export function schemaFields(schema: AnyZod, prefix = ''): SchemaField[] {
  const { inner, defaultValue } = unwrap(schema);
  const here = (takes: string): SchemaField[] => {
    const d = defaultWords(defaultValue);
    return prefix === '' ? [] : [{ path: prefix, takes, ...(d !== undefined ? { default: d } : {}) }];
  };
  const under = (obj: z.ZodObject<z.ZodRawShape>) =>
    Object.entries(obj.shape).flatMap(([k, v]) => schemaFields(v as AnyZod, prefix ? `${prefix}.${k}` : k));
  if (inner instanceof z.ZodObject) return under(inner);
  if (inner instanceof z.ZodUnion) {
    const options = (inner._def.options as AnyZod[]).map((o) => unwrap(o).inner);
    const mapping = options.find((o): o is z.ZodObject<z.ZodRawShape> => o instanceof z.ZodObject);
    if (mapping)
      return [
        ...here(
          `${options
            .filter((o) => o !== mapping)
            .map(takesWords)
            .join(' | ')}, or a mapping of the fields below`,
        ),
        ...under(mapping),
      ];
  }
  return here(takesWords(inner));
}

/** The fields as a markdown table. */
export function schemaFieldTable(fields: readonly SchemaField[]): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  return [
    '| field | takes | default |',
    '|---|---|---|',
    ...fields.map(
      (f) => `| \`${f.path}\` | ${cell(f.takes)} | ${f.default !== undefined ? `\`${cell(f.default)}\`` : ''} |`,
    ),
  ].join('\n');
}
