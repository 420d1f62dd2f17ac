// The linter (docs/architecture.md#checks): a small, strict rule set, no style rules (no formatter either: a
// reformat of every file would churn the history for nothing). Each rule here finds a bug or dead code:
// an unused name, two imports of one module, a promise nobody awaits.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const unusedAndDuplicates = {
  // `_`-prefixed names are unused on purpose (a parameter kept for its position, a value destructured away).
  '@typescript-eslint/no-unused-vars': ['error', {
    argsIgnorePattern: '^_',
    varsIgnorePattern: '^_',
    caughtErrorsIgnorePattern: '^_',
    destructuredArrayIgnorePattern: '^_',
    ignoreRestSiblings: true,
  }],
  // ESLint's own rule, not a plugin's: typescript-eslint retired its copy in favour of it. An `import type`
  // beside a value import of the same module is allowed: the type-only line is erased whole when the file is
  // transpiled, so it is a different statement, not a duplicate; two value (or two type) imports of one module are.
  // A re-export (`export { x } from`) beside an import of the same module is not checked: it is another act.
  'no-duplicate-imports': ['error', { allowSeparateTypeImports: true }],
};

export default defineConfig(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.tap/**', 'test/client/generated/**', 'src/client/generated/**', 'docs/recipes/**', 'openapi/**', 'fixtures/**'],
  },
  // TypeScript with type information: src/ through tsconfig.json, test/ through tsconfig.test.json.
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    ignores: ['test/client/**'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        project: ['./tsconfig.json', './tsconfig.test.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      ...unusedAndDuplicates,
      // A promise nobody awaits loses its rejection and its ordering.
      '@typescript-eslint/no-floating-promises': ['error', {
        // tap's subtests (`t.test(...)`, `t.skip(...)`) are queued and awaited by tap itself; awaiting them is optional.
        allowForKnownSafePromises: [{ from: 'package', package: '@tapjs/core', name: 'PromiseWithSubtest' }],
      }],
      // A promise where a boolean or a void callback is expected: `if (promise)` is always true, and a rejection
      // inside a callback its caller does not await goes nowhere.
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  // JavaScript (scripts/, bench/, the dashboard's browser modules) and the generated-client test, which has its own
  // tsconfig: no type information, so no floating-promise rule.
  {
    files: ['**/*.js', '**/*.mjs', 'test/client/**/*.ts'],
    languageOptions: { parser: tseslint.parser, sourceType: 'module', ecmaVersion: 'latest' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: unusedAndDuplicates,
  },
);
