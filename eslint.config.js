import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      '.cache/',
      'node_modules/',
      'coverage/',
      'bench/results*',
      'test/fixtures/',
      'bin/',
      // One-off codemods in plain Node ESM, outside the TypeScript project (node scripts/<name>.mjs).
      'scripts/',
      'eslint.config.js',
    ],
  },
  js.configs.recommended,
  // Type-aware rules (floating promises, unsafe any, awaits of non-promises …) over every TypeScript file.
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      // An async function that implements an async interface without awaiting is fine; the rules that catch
      // real mistakes (floating and misused promises, awaiting a non-promise) stay on.
      '@typescript-eslint/require-await': 'off',
      'no-console': 'off',
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // vitest's asymmetric matchers (expect.any, expect.stringMatching …) are typed `any`.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      'no-restricted-properties': [
        'error',
        { object: 'it', property: 'only' },
        { object: 'describe', property: 'only' },
        { object: 'it', property: 'skip' },
        { object: 'describe', property: 'skip' },
      ],
    },
  },
);
