import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Parser } from '@asyncapi/parser';
import { DIALECTS } from '../helpers/dialects.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { ClientFrames, ServerFrames } from '../../src/calls/frames.ts';

const dialect = DIALECTS[0]!; // the document does not depend on the database

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
    const { document: parsed, diagnostics } = await new Parser().parse(res.body);
    const errors = diagnostics.filter((d) => Number(d.severity) === 0); // 0: an error (DiagnosticSeverity)
    assert.deepEqual(errors.map((d) => `${d.path.join('.')}: ${d.message}`), []);
    assert.ok(parsed);
    const names = parsed.allMessages().all().map((m) => m.name());
    assert.deepEqual(names.sort(), [...Object.keys(ClientFrames), ...Object.keys(ServerFrames)].sort());
    assert.deepEqual(document.channels.call.messages.server_turn_done.payload.properties.type.const, 'turn_done');

    const openapi = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(openapi.externalDocs.url, '/asyncapi.json');
    assert.match(openapi.info.description, /\/asyncapi\.json/);
  });
});
