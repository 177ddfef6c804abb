import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'build/', 'node_modules/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      'no-console': ['error'],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  { files: ['src/cli/**', 'bench/**', 'test/**', 'bin/**', 'scripts/**'], rules: { 'no-console': 'off' } },
  // Tests write generators that only throw, to stand in for failing plugins.
  { files: ['test/**'], rules: { 'require-yield': 'off' } },
);
