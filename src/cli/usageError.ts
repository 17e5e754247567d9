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
