import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createClient } from '@hey-api/openapi-ts';
import ts from 'typescript';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';

const run = promisify(execFile);
const FIXTURES = 'test/fixtures/generators';
const SCENARIOS = ['openapi-typescript.ts', 'hey-api.ts'];
/** openapi-typescript's command line, as the SDK resolves it (it wants TypeScript 5, the repository has 6). */
const OPENAPI_TYPESCRIPT = join(dirname(createRequire(resolve('sdk/package.json')).resolve('openapi-typescript/package.json')), 'bin/cli.js');

/**
 * The done-when of "an OpenAPI document made for generators": clients generated from the served
 * /openapi.json by openapi-typescript and by @hey-api/openapi-ts, with their default settings,
 * compile docs/sdk.md's scenario (rewritten for each, in test/fixtures/generators/) under
 * tsc --strict, and the scenarios hold no cast.
 */
describe('clients generated from /openapi.json compile the SDK scenario without a cast', () => {
  let t: TestApp;
  let dir: string;
  before(async () => {
    t = await buildTestApp(DIALECTS[0]!);
    dir = await mkdtemp(join(tmpdir(), 'parley-generators-'));
    await symlink(resolve('node_modules'), join(dir, 'node_modules'));
  });
  after(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the scenarios hold no type assertion, non-null assertion or any', async () => {
    for (const name of SCENARIOS) {
      const source = ts.createSourceFile(name, await readFile(join(FIXTURES, name), 'utf8'), ts.ScriptTarget.ES2022, true);
      const found: string[] = [];
      const visit = (node: ts.Node) => {
        if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node) || ts.isNonNullExpression(node) || node.kind === ts.SyntaxKind.AnyKeyword) {
          found.push(`${name}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${node.getText()}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
      assert.deepEqual(found, [], 'casts');
    }
  });

  it('openapi-typescript and @hey-api/openapi-ts output compiles them under tsc --strict', async () => {
    const document = (await t.call('GET', '/openapi.json', { token: null })).json();
    const documentFile = join(dir, 'openapi.json');
    await writeFile(documentFile, JSON.stringify(document));
    await run(process.execPath, [OPENAPI_TYPESCRIPT, documentFile, '--output', join(dir, 'schema.ts')], { timeout: 120_000 });
    await createClient({ input: documentFile, output: join(dir, 'hey'), logs: { level: 'silent' } });
    for (const name of SCENARIOS) await copyFile(join(FIXTURES, name), join(dir, name));
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', lib: ['ES2023', 'DOM'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, noEmit: true, types: ['node'] },
      include: ['*.ts', 'hey/**/*.ts'],
    }));
    const tsc = resolve('node_modules/typescript/bin/tsc');
    const out = await run(process.execPath, [tsc, '-p', dir], { timeout: 180_000 }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? 'tsc failed' }));
    assert.equal(out.stdout.trim(), '', out.stdout);
  });
});
