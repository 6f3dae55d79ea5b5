import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

/**
 * The layers of src/ (docs/architecture.md), lowest first. A file may import from its own layer
 * and the layers below it, never from one above: import-x resolves every import to its file, so
 * a relative path cannot slip past the rule.
 */
const LAYERS = {
  platform: ['./src/config.ts', './src/clock.ts', './src/context.ts', './src/logging.ts', './src/port-holder.ts', './src/db', './src/http', './src/jobs', './src/egress', './src/crypto'],
  // The engine, bottom up: signalling and media, the call session, telephony (dialer, inbound routing, registrations).
  media: ['./src/sip', './src/voice'],
  calls: ['./src/calls'],
  telephony: ['./src/telephony'],
  features: ['./src/modules'],
  app: ['./src/app.ts', './src/server.ts', './src/cli.ts', './src/cli', './src/lab', './src/workers.ts', './src/diagnostics.ts', './src/engine.ts'],
};
const ORDER = Object.keys(LAYERS);

/** One zone per layer: nothing in it imports from any layer above it. */
const layerZones = ORDER.slice(0, -1).map((layer, i) => ({
  target: LAYERS[layer],
  from: ORDER.slice(i + 1).flatMap((above) => LAYERS[above]),
  message: `${layer} must not import from a layer above it (${ORDER.slice(i + 1).join(', ')}): docs/architecture.md, "The layers"`,
}));

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'bin/', 'console/dist/', 'sdk/dist/', 'sdk/src/generated/', 'test-results/',
    // Compiled by test/sdk/generators.test.ts next to clients it generates, which are not here.
    'test/fixtures/generators/'] },
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
  // The layers of src/ (docs/architecture.md): platform, then the engine (media, calls,
  // telephony), then the feature modules, then the app. No arrow goes back up.
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: layerZones }] },
  },
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
