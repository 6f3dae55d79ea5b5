import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { ClientFrames, ServerFrames } from '../../src/calls/frames.ts';
import { TwilioMessages, TwilioReplies } from '../../src/calls/transports/twilio-messages.ts';

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
    for (const channel of ['call', 'twilioMediaStream']) {
      for (const message of Object.values<{ name: string; payload: object }>(document.channels[channel].messages)) {
        assert.doesNotThrow(() => ajv.compile(message.payload), `${channel}: ${message.name}`);
      }
    }

    // The call socket: every frame of frames.ts, and a voice call's binary audio both ways.
    const prefixed = (prefix: string, names: string[]) => names.map((name) => `${prefix}_${name}`);
    assert.deepEqual(Object.keys(document.channels.call.messages).sort(), [
      ...prefixed('client', [...Object.keys(ClientFrames), 'audio']), ...prefixed('server', [...Object.keys(ServerFrames), 'audio']),
    ].sort());
    assert.deepEqual(document.channels.call.messages.server_turn_done.payload.properties.type.const, 'turn_done');
    for (const key of ['client_audio', 'server_audio']) {
      assert.equal(document.channels.call.messages[key].contentType, 'application/octet-stream');
      assert.deepEqual(document.channels.call.messages[key].payload.format, 'binary');
    }
    assert.ok(document.operations.sendClientFrame.messages.some((m: { $ref: string }) => m.$ref.endsWith('/client_audio')));
    assert.ok(document.operations.receiveServerFrame.messages.some((m: { $ref: string }) => m.$ref.endsWith('/server_audio')));

    // The Twilio Media Streams socket: what Twilio sends and what Parley answers, from the schemas the transport reads and writes with.
    const twilio = document.channels.twilioMediaStream;
    assert.equal(twilio.address, '/api/v1/calls/{callId}/media-stream/{token}');
    assert.deepEqual(Object.keys(twilio.messages).sort(), [...prefixed('twilio', Object.keys(TwilioMessages)), ...prefixed('parley', Object.keys(TwilioReplies))].sort());
    assert.equal(twilio.messages.twilio_start.payload.properties.event.const, 'start');
    assert.deepEqual(document.operations.parleySendsToTwilio.messages.length, Object.keys(TwilioReplies).length);

    // Without PARLEY_PUBLIC_URL the server is where the request went.
    assert.deepEqual(document.servers.parley.host, 'localhost');
    assert.deepEqual(document.servers.parley.protocol, 'ws');

    const openapi = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(openapi.externalDocs.url, '/asyncapi.json');
    assert.match(openapi.info.description, /\/asyncapi\.json/);
    assert.deepEqual(openapi.servers.map((s: { url: string }) => s.url), ['http://localhost:80']);
  });

  it('both documents name PARLEY_PUBLIC_URL as their server when it is set, path prefix included', async () => {
    const behind = await buildTestApp(dialect, { PARLEY_PUBLIC_URL: 'https://voice.example.com/parley/' });
    try {
      const asyncapi = (await behind.app.inject({ method: 'GET', url: '/asyncapi.json', headers: { host: 'internal:8080' } })).json();
      assert.deepEqual(asyncapi.servers.parley, { host: 'voice.example.com', protocol: 'wss', pathname: '/parley', description: asyncapi.servers.parley.description });
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats(ajv);
      const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA, 'utf8')));
      assert.equal(validate(asyncapi), true, JSON.stringify(validate.errors, null, 2));
      const openapi = (await behind.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'internal:8080' } })).json();
      assert.deepEqual(openapi.servers.map((s: { url: string }) => s.url), ['https://voice.example.com/parley']);
    } finally {
      await behind.close();
    }
  });
});
