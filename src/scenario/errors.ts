import { ScenarioError } from '../sim/errors.js';

/** One problem in a scenario: where it is and what is wrong. */
export interface Problem {
  path: string;
  message: string;
  /** Line of the scenario file the field (or the nearest section that holds it) is on, when known. */
  line?: number;
}

/** Several problems found at once in one scenario; the message lists them one per line. */
export class InvalidScenarioError extends ScenarioError {
  readonly problems: Problem[];

  constructor(source: string, problems: Problem[]) {
    super(
      '',
      `${source}: ${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}:\n` +
        problems
          .map((p) => `  ${p.path || '(top level)'}: ${p.message}${p.line ? ` [line ${p.line}]` : ''}`)
          .join('\n'),
    );
    this.name = 'InvalidScenarioError';
    this.problems = problems;
  }
}

/** A `ScenarioError` as a problem: its path, and its message without the path in front. */
export function problemOf(err: ScenarioError): Problem {
  if (err instanceof InvalidScenarioError)
    throw new Error('problemOf: an InvalidScenarioError holds several problems; use .problems');
  const prefix = `${err.path}: `;
  return {
    path: err.path,
    message: err.path && err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message,
  };
}

/**
 * The problems of `err` with the line of the scenario file each one's field is on (or its nearest section's, for a
 * field the file leaves to a default). A field that `given` reports as set elsewhere (--set, an import) gets none.
 */
export function withFileLines(
  err: InvalidScenarioError,
  source: string,
  lines: ReadonlyMap<string, number> | undefined,
  given: (path: string) => boolean,
): InvalidScenarioError {
  if (!lines || lines.size === 0) return err;
  const lineOf = (path: string): number | undefined => {
    if (path === '' || given(path)) return undefined;
    const keys = path.split('.');
    for (let n = keys.length; n > 0; n--) {
      const line = lines.get(keys.slice(0, n).join('.'));
      if (line !== undefined) return line;
    }
    return undefined;
  };
  return new InvalidScenarioError(
    source,
    err.problems.map((p) => {
      const line = p.line ?? lineOf(p.path);
      return line === undefined ? p : { ...p, line };
    }),
  );
}
