import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    pool: 'forks',
    // A temporary directory for the tests that compile the CLI (test/cli/builtCli.ts), removed after the run.
    globalSetup: ['test/globalSetup.ts'],
  },
});
