import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

/**
 * The layer rule of eslint.config.js (docs/architecture.md, "The layers"): a planted upward
 * import in each layer fails lint, and a downward one passes. The planted files are linted as
 * text under real paths of the tree, without type information (the layer rule needs none).
 */
const eslint = new ESLint({ overrideConfig: [{ files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked }] });

async function layerErrors(path: string, from: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import type { X } from '${from}';\nexport type Y = X;\n`, { filePath: path });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'import-x/no-restricted-paths').map((m) => m.message);
}

describe('lint holds the layers of src/', { timeout: 120_000 }, () => {
  const upward: [string, string][] = [
    ['src/config.ts', './sip/rtp/ports.ts'],
    ['src/db/planted.ts', '../calls/session.ts'],
    ['src/http/planted.ts', '../modules/calls/calls.service.ts'],
    ['src/sip/planted.ts', '../calls/session.ts'],
    ['src/voice/planted.ts', '../telephony/dialer.ts'],
    ['src/calls/planted.ts', '../telephony/sip-dialer.ts'],
    ['src/calls/planted.ts', '../modules/calls/call-store.ts'],
    ['src/telephony/planted.ts', '../modules/sip/telephony-directory.ts'],
    ['src/modules/calls/planted.ts', '../../app.ts'],
    ['src/modules/tasks/planted.ts', '../../engine.ts'],
  ];
  for (const [path, from] of upward) {
    it(`${path} importing ${from} fails`, async () => {
      const errors = await layerErrors(path, from);
      assert.equal(errors.length, 1, `expected one layer error, got ${JSON.stringify(errors)}`);
      assert.match(errors[0] ?? '', /must not import from a layer above it/);
    });
  }

  const downward: [string, string][] = [
    ['src/calls/planted.ts', '../sip/dialog.ts'],
    ['src/telephony/planted.ts', '../calls/engine.ts'],
    ['src/modules/calls/planted.ts', '../../calls/store.ts'],
    ['src/engine.ts', './modules/calls/call-store.ts'],
  ];
  for (const [path, from] of downward) {
    it(`${path} importing ${from} passes`, async () => {
      assert.deepEqual(await layerErrors(path, from), []);
    });
  }
});
