import { closest } from './closestName.js';

/**
 * Typed errors thrown by library code. Only `src/cli` turns them into messages and exit codes
 * (docs/architecture.md, Conventions): a `ScenarioError` means the input is wrong, exit code 2, no stack trace.
 */

/** A problem with the scenario input, located by `path` (for example `cluster.node.gpu` or `parallel.tp`). */
export class ScenarioError extends Error {
  /** Dotted path of the offending field in the scenario; empty when the whole input is at fault. */
  readonly path: string;

  constructor(path: string, message: string) {
    super(path ? `${path}: ${message}` : message);
    this.name = 'ScenarioError';
    this.path = path;
  }
}

/**
 * A preset name that does not exist; the message suggests the closest one (a likely typo) and lists the names that do.
 */
export class UnknownPresetError extends ScenarioError {
  /** What kind of preset was asked for: `gpu`, `node` or `network`. */
  readonly kind: string;
  readonly requested: string;
  readonly allowed: readonly string[];

  constructor(kind: string, requested: string, allowed: readonly string[], path = kind) {
    const meant = closest(requested, allowed);
    super(
      path,
      `unknown ${kind} preset '${requested}'${meant ? ` (did you mean '${meant}'?)` : ''}; ` +
        `expected one of: ${allowed.join(', ')}`,
    );
    this.name = 'UnknownPresetError';
    this.kind = kind;
    this.requested = requested;
    this.allowed = allowed;
  }
}
