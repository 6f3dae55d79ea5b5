// The voicemail_detection extension as the API takes it: its parameters checked (a 400 naming the
// field and the allowed values, nothing changed), one per agent, typed in /openapi.json; kept out
// of the LLM's tools; and a call that is not placed by the dialer (the WebSocket) never runs it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { callRecord, startWorld, type World } from '../calls/support/world.ts';

const VALID = { action: 'leave_message', message: 'Hi {{firstName}}, please call us back.', maxWaitSeconds: 20, detectScreening: false, greeting: 'after_verdict', retryAfterMessage: true };

for (const dialect of DIALECTS) {
  describe(`the voicemail_detection extension (${dialect})`, () => {
    let w: World;
    before(async () => {
      w = await startWorld(dialect);
    });
    after(() => w.close());

    const CASES: [string, unknown[], string, RegExp][] = [
      ['leave_message without a message', [{ type: 'voicemail_detection', parameters: { action: 'leave_message' } }], 'extensions[0].parameters.message', /required when action is leave_message/],
      ['an unknown action', [{ type: 'voicemail_detection', parameters: { action: 'ignore' } }], 'extensions[0].parameters.action', /hang_up.*leave_message/],
      ['an unknown greeting', [{ type: 'voicemail_detection', parameters: { action: 'hang_up', greeting: 'never' } }], 'extensions[0].parameters.greeting', /at_answer.*after_verdict/],
      ['no action', [{ type: 'voicemail_detection', parameters: {} }], 'extensions[0].parameters.action', /required/],
      ['maxWaitSeconds under 5', [{ type: 'voicemail_detection', parameters: { action: 'hang_up', maxWaitSeconds: 4 } }], 'extensions[0].parameters.maxWaitSeconds', /5/],
      ['maxWaitSeconds over 60', [{ type: 'voicemail_detection', parameters: { action: 'hang_up', maxWaitSeconds: 61 } }], 'extensions[0].parameters.maxWaitSeconds', /60/],
      ['a blank message', [{ type: 'voicemail_detection', parameters: { action: 'leave_message', message: '   ' } }], 'extensions[0].parameters.message', /pattern|match/],
      ['an unknown parameter', [{ type: 'voicemail_detection', parameters: { action: 'hang_up', beepMaxAwaitSeconds: 10 } }], 'extensions[0].parameters.beepMaxAwaitSeconds', /./],
      ['two of them', [{ type: 'voicemail_detection', parameters: { action: 'hang_up' } }, { type: 'voicemail_detection', parameters: { action: 'hang_up' } }], 'extensions[1].type', /one per assistant/],
    ];
    for (const [label, extensions, path, message] of CASES) {
      it(`400 for ${label}, naming ${path}, and nothing is created`, async () => {
        const before = (await w.api('GET', `${w.tenant.orgPath}/agents`)).body.totalElements;
        const res = await w.api('POST', `${w.tenant.orgPath}/agents`, { name: 'x', extensions });
        assert.equal(res.status, 400, JSON.stringify(res.body));
        const detail = res.body.error.details.find((d: { path: string }) => d.path === path);
        assert.ok(detail, `${path} not in ${JSON.stringify(res.body.error.details)}`);
        assert.match(detail.message, message);
        assert.equal((await w.api('GET', `${w.tenant.orgPath}/agents`)).body.totalElements, before);
      });
    }

    it('an agent keeps it as written, beside call-control extensions, and a PUT replaces it', async () => {
      const created = await w.api('POST', `${w.tenant.orgPath}/agents`, { name: 'Caller', extensions: [{ type: 'voicemail_detection', parameters: VALID }, { type: 'end_call', parameters: {} }] });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const [detection] = created.body.data.extensions;
      assert.deepEqual([detection.type, detection.name, detection.parameters], ['voicemail_detection', 'voicemail_detection', VALID]);
      const agent = created.body.data;
      const put = await w.api('PUT', `${w.tenant.orgPath}/agents/${agent.id}`, {
        name: agent.name, systemPrompt: null, systemPromptGreeting: null, llmAudioContentGenerationStrategyId: agent.llmAudioContentGenerationStrategyId, callEventHooks: [],
        extensions: [{ id: detection.id, type: 'voicemail_detection', parameters: { action: 'hang_up' } }],
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const read = (await w.api('GET', `${w.tenant.orgPath}/agents/${agent.id}`)).body.data;
      assert.deepEqual(read.extensions.map((e: { id: string; parameters: unknown }) => [e.id, e.parameters]), [[detection.id, { action: 'hang_up' }]]);
    });

    it('/openapi.json types its parameters', async () => {
      const doc = (await w.api('GET', '/openapi.json')).body;
      type Node = { title?: string; properties?: Record<string, { enum?: string[] }> };
      const find = (value: unknown): Node | undefined => {
        if (!value || typeof value !== 'object') return undefined;
        if ((value as Node).title === 'VoicemailDetectionParameters') return value;
        for (const child of Object.values(value)) {
          const found = find(child);
          if (found) return found;
        }
        return undefined;
      };
      const schema = find(doc);
      assert.ok(schema, 'VoicemailDetectionParameters is in the document');
      assert.deepEqual(schema.properties?.action?.enum, ['hang_up', 'leave_message']);
      assert.deepEqual(schema.properties?.greeting?.enum, ['at_answer', 'after_verdict']);
      assert.deepEqual(Object.keys(schema.properties ?? {}).sort(), ['action', 'detectScreening', 'greeting', 'maxWaitSeconds', 'message', 'retryAfterMessage']);
    });

    it('an assistant may have it, but its WebSocket calls are never judged: the greeting comes at once, answeredBy is null, and the LLM is not offered it', async () => {
      const id = await w.createAssistant({ name: 'Front desk', systemPromptGreeting: 'Hello!', extensions: [{ type: 'voicemail_detection', parameters: { action: 'hang_up' } }] });
      const { id: callId, client } = await w.open(id);
      assert.equal((await client.next('assistant_message')).text, 'Hello!');
      const llmFrom = w.llm.requests.length;
      client.send({ type: 'user_message', text: 'Hi' });
      await client.next('turn_done');
      const tools = (w.llm.requests[llmFrom]?.tools ?? []) as { function: { name: string } }[];
      assert.ok(!tools.some((tool) => tool.function.name === 'voicemail_detection'), JSON.stringify(tools));
      client.send({ type: 'end' });
      await client.next('call_ended');
      const record = await callRecord(w, callId);
      assert.deepEqual([record.answeredBy, record.detection], [null, null]);
    });
  });
}
