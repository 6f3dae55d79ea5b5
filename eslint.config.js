import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const LAYER_PATTERNS = {
  calls: ['**/calls/*', '**/calls/**/*', '!**/modules/calls/*'],
  modules: ['**/modules/**'],
  // src/sip/transaction/server.ts is the SIP server transaction, not the HTTP server (the
  // platform files at src/ itself, config/clock/context, import nothing named server.ts).
  app: ['**/app.ts', '**/server.ts', '**/cli.ts', '**/cli/*', '**/workers.ts', '**/diagnostics.ts', '!**/transaction/server.ts', '!./server.ts'],
};

/** One no-restricted-imports rule per layer, naming the layers it must not import. */
function layerRules(layers) {
  return layers.map(({ name, files, above }) => ({
    files,
    rules: {
      'no-restricted-imports': ['error', {
        patterns: above.map((layer) => ({
          group: LAYER_PATTERNS[layer],
          message: `${name} must not import from ${layer} (docs/architecture.md: the layers of src/)`,
        })),
      }],
    },
  }));
}

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'bin/', 'console/dist/', 'console/src/api/schema.d.ts', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-floating-promises': 'error',
      // Fastify plugins, hooks and handlers are async by contract, awaiting or not.
      '@typescript-eslint/require-await': 'off',
      'no-restricted-properties': [
        'error',
        { object: 'describe', property: 'only', message: 'No focused tests.' },
        { object: 'it', property: 'only', message: 'No focused tests.' },
        { object: 'test', property: 'only', message: 'No focused tests.' },
        { object: 'describe', property: 'skip', message: 'No skipped tests.' },
        { object: 'it', property: 'skip', message: 'No skipped tests.' },
        { object: 'test', property: 'skip', message: 'No skipped tests.' },
      ],
    },
  },
  // The layers of src/ (docs/architecture.md): platform below the call engine, the engine below
  // the feature modules, the modules below the app (app.ts, server.ts, cli.ts, workers.ts). No arrow goes back up.
  ...layerRules([
    { name: 'platform', files: ['src/{http,db,jobs,egress,crypto,sip,voice}/**/*.ts', 'src/{config,clock,context}.ts'], above: ['calls', 'modules', 'app'] },
    { name: 'the call engine', files: ['src/calls/**/*.ts'], above: ['modules', 'app'] },
    { name: 'feature modules', files: ['src/modules/**/*.ts'], above: ['app'] },
  ]),
  {
    // Tests read JSON responses (any by nature) and node:test's describe/it return promises the runner tracks.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
