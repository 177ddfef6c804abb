import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'build/', 'node_modules/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  // Type-aware: a floating or misused promise is an unhandled rejection waiting, and an
  // unhandled rejection ends the process. tsconfig.json holds src/, test/ and bench/, so the
  // project service builds one program for all three.
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      'no-console': ['error'],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Handing on a caught value as it is (`catch (err) { reject(err) }`) is right; rejecting
      // with a literal is still refused.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // Left out: its fix is to drop `async`, which turns a throw of an implementation of a
      // promise-returning contract (a transport's subscribe, a plugin's create) into a
      // synchronous throw that a caller's `.catch` never sees. The promise rules above are
      // what keeps rejections handled.
      '@typescript-eslint/require-await': 'off',
    },
  },
  // The JavaScript files (bin/, configs, test fakes run as child processes) are in no tsconfig.
  { files: ['**/*.{js,mjs,cjs}'], extends: [tseslint.configs.disableTypeChecked] },
  { files: ['src/cli/**', 'bench/**', 'test/**', 'bin/**', 'scripts/**'], rules: { 'no-console': 'off' } },
  // Tests write generators that only throw, to stand in for failing plugins.
  { files: ['test/**'], rules: { 'require-yield': 'off' } },
  // Tests read what they check from JSON.parse and iterator results, which TypeScript types
  // `any`: typing each of those (about a hundred) would guard nothing that the assertions do not.
  {
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
