import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { ClientFrames, ServerFrames } from '../../src/calls/frames.ts';

const dialect = DIALECTS[0]!; // the document does not depend on the database
/** The official AsyncAPI 3.0.0 JSON Schema, vendored (see test/fixtures/asyncapi/README.md). */
// ajv-formats is CommonJS with a default export that ESM sees as the module (as src/http/validation.ts notes).
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const SCHEMA = 'test/fixtures/asyncapi/asyncapi-3.0.0.schema.json';

/** The value a local `$ref` ("#/a/b") points at in the document, or undefined. */
function resolveRef(document: unknown, ref: string): unknown {
  assert.match(ref, /^#\//, `only local references: ${ref}`);
  return ref.slice(2).split('/').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], document);
}

/** Every `$ref` string in the document, outside message payloads (JSON Schema refs of their own). */
function refsOf(node: unknown, inPayload = false): string[] {
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) => (key === '$ref' && typeof value === 'string' && !inPayload ? [value] : refsOf(value, inPayload || key === 'payload')));
}

describe('the call WebSocket in the API reference: /asyncapi.json', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp(dialect);
  });
  after(() => t.close());

  it('is a valid AsyncAPI 3.0 document with every frame of frames.ts, and /docs links it', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/asyncapi.json' });
    assert.equal(res.statusCode, 200);
    const document = res.json();
    assert.equal(document.asyncapi, '3.0.0');

    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA, 'utf8')));
    assert.equal(validate(document), true, JSON.stringify(validate.errors, null, 2));
    // What the schema cannot say: every reference resolves, and an operation sends only its channel's messages.
    for (const ref of refsOf(document)) assert.notEqual(resolveRef(document, ref), undefined, `${ref} resolves`);
    for (const [name, operation] of Object.entries<{ channel: { $ref: string }; messages: { $ref: string }[] }>(document.operations)) {
      for (const message of operation.messages) assert.ok(message.$ref.startsWith(`${operation.channel.$ref}/messages/`), `${name}: ${message.$ref} is a message of its channel`);
    }
    // Each payload is a JSON Schema that compiles.
    const messages = Object.values<{ name: string; payload: object }>(document.channels.call.messages);
    for (const message of messages) assert.doesNotThrow(() => ajv.compile(message.payload), message.name);

    assert.deepEqual(messages.map((m) => m.name).sort(), [...Object.keys(ClientFrames), ...Object.keys(ServerFrames)].sort());
    assert.deepEqual(document.channels.call.messages.server_turn_done.payload.properties.type.const, 'turn_done');

    const openapi = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(openapi.externalDocs.url, '/asyncapi.json');
    assert.match(openapi.info.description, /\/asyncapi\.json/);
  });
});
