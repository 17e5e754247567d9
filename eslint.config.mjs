// Lint rules that encode what docs/architecture.md says of the code: the layers and what each may import, and the
// size of functions in src/sim. Formatting is prettier's (.prettierrc.json); `npm run lint` runs both checks.
import tseslint from 'typescript-eslint';

/** Imports a layer may not make: `patterns` of no-restricted-imports, each with the reason shown. */
const forbid = (...groups) => ({
  'no-restricted-imports': ['error', { patterns: groups.map(([group, message]) => ({ group: [group], message })) }],
});
const NO_CLI = ['**/cli/*', 'only src/cli decides exit codes and prints: no layer imports it'];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'native/build/', 'reports/', 'data/'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    // No line over 120 characters: prettier's width, which it does not apply to strings, templates or comments.
    files: ['**/*.ts'],
    rules: { 'max-len': ['error', { code: 120 }] },
  },
  {
    // src/sim is pure: nothing outside itself, no file system, clock, environment or unseeded randomness.
    files: ['src/sim/**/*.ts'],
    rules: {
      ...forbid(
        ['../../*', 'src/sim imports nothing outside itself'],
        ['node:*', 'src/sim is pure: no Node module (file system, clock, environment)'],
        NO_CLI,
      ),
      'no-restricted-globals': ['error', { name: 'process', message: 'src/sim reads no environment' }],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'draw from randomStream or jitterer (engine/random.ts)' },
        { object: 'Date', property: 'now', message: 'src/sim has no clock' },
      ],
      // Small functions, one idea each; a longer one says why in an eslint-disable comment's reason.
      'max-params': ['error', 5],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  { files: ['src/threads/**/*.ts'], rules: forbid(['../*/*', 'the worker pool knows nothing of the project'], NO_CLI) },
  {
    files: ['src/report/**/*.ts'],
    rules: forbid(['node:fs', 'reports are strings: the caller writes them'], ['node:fs/*', 'no file system'], NO_CLI),
  },
  {
    files: [
      'src/scenario/**/*.ts',
      'src/accuracy/**/*.ts',
      'src/advise/**/*.ts',
      'src/plan/**/*.ts',
      'src/sweep/**/*.ts',
      'src/calibrate/**/*.ts',
      'src/validation/**/*.ts',
      'src/bench/**/*.ts',
    ],
    rules: forbid(NO_CLI),
  },
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
