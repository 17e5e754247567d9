import type { ZodError, ZodIssue } from 'zod';
import type { Problem } from './errors.js';

function describe(issue: ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.received === 'undefined') return `is required (expected ${issue.expected})`;
      return `expected ${issue.expected}, got ${issue.received}`;
    case 'invalid_enum_value':
      return `expected one of ${issue.options.map((o) => `'${String(o)}'`).join(', ')}, got '${String(issue.received)}'`;
    case 'unrecognized_keys':
      return `unknown field(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
    case 'too_small':
      if (issue.type === 'number') return `must be ${issue.inclusive ? '≥' : '>'} ${issue.minimum}`;
      if (issue.type === 'array') return `needs at least ${issue.minimum} entries`;
      return issue.message;
    case 'too_big':
      if (issue.type === 'number') return `must be ${issue.inclusive ? '≤' : '<'} ${issue.maximum}`;
      return issue.message;
    case 'invalid_union': {
      const inner = issue.unionErrors.flatMap((e) => e.issues).filter((i) => i.code !== 'invalid_type');
      if (inner.length > 0) return describe(inner[0]);
      return 'expected a preset name (string) or an object of fields';
    }
    case 'invalid_literal':
      return `expected ${JSON.stringify(issue.expected)}`;
    default:
      if (issue.message === 'Expected integer, received float') return 'must be a whole number';
      return issue.message;
  }
}

/** Turns zod's issues into one problem per issue, with a dotted path. */
export function zodProblems(error: ZodError, prefix = ''): Problem[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map(String)].filter((s) => s !== '').join('.');
    return { path, message: describe(issue) };
  });
}
