/** Wrong command-line usage: printed without a stack trace, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * A check the user asked for did not pass (for example `validate --max-error`): the input was fine, so it
 * is not exit code 2; scripts and CI see exit code 3. The message is printed without a stack trace.
 */
export class CheckFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckFailedError';
  }
}

/**
 * The user interrupted a long run (Ctrl-C) and it stopped cleanly, keeping what it had done: exit code 130, the
 * shell's code for SIGINT, so that scripts and schedulers tell it from bad input (2). Printed without a stack trace.
 */
export class InterruptedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InterruptedError';
  }
}
