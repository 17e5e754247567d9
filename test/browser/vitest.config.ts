import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Browser tests: run only by `npm run test:browser` (they need Debian's chromium at /usr/bin/chromium),
 * never by `npm test`, whose include pattern (test/**\/*.test.ts) does not match *.browser.ts.
 */
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/browser/**/*.browser.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
