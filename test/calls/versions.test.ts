/**
 * Calls run a version and say which: a call runs the assistant as it was when it started, and
 * an agent task's calls run the version the task pins (else the agent's current one).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createCall } from '../../src/modules/calls/calls.service.ts';
import type { Dialer, DialOutcome, DialRequest } from '../../src/telephony/dialer.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { connect } from './support/client.ts';
import { callRecord, settledTask, startWorld, type World } from './support/world.ts';

const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };

/** Places a task's call over the call WebSocket of the world's own service: one user message, the answer, the end. */
class WebSocketDialer implements Dialer {
  readonly name = 'websocket-test';
  world: World | undefined;

  async dial(request: DialRequest): Promise<DialOutcome> {
    const world = this.world as World;
    const deps = { ctx: world.t.ctx, owner: world.t.ctx.processId };
    const call = await createCall(deps, {
      kind: 'agent', organizationId: request.organizationId, sourceId: request.agentId, userValues: request.userValues,
      traceId: crypto.randomUUID(), transport: { type: 'websocket' }, taskId: request.taskId,
    });
    const client = await connect(`${world.address.replace(/^http/, 'ws')}/api/v1/calls/${call.id}/ws?token=${call.token}`);
    await client.next('call_started');
    client.send({ type: 'user_message', text: 'Hello?' });
    await client.next('assistant_message');
    client.send({ type: 'end' });
    await client.closed;
    return { status: 'completed', callId: call.id };
  }
}

for (const dialect of DIALECTS) {
  describe(`calls run a version and record it (${dialect})`, () => {
    let w: World;
    const dialer = new WebSocketDialer();
    /** The system prompt of each chat request the LLM got, in order. */
    const prompts = () => w.llm.requests.map((r) => r.messages[0]?.content);
    before(async () => {
      w = await startWorld(dialect, {}, { dialer });
      dialer.world = w;
      w.llm.respond = () => ({ text: 'Fine, thanks.' });
    });
    after(() => w.close());

    it('a call runs the assistant as it was when the call started, and its record says which version', async () => {
      const id = await w.createAssistant({ name: 'Desk', systemPrompt: 'You are version one.' });
      const item = `${w.tenant.orgPath}/assistants/${id}`;
      const started = await w.startCall(id);
      assert.equal((await w.api('PATCH', item, { systemPrompt: 'You are version two, {{name}}.' }, MERGE_PATCH)).status, 200);
      const client = await connect(started.websocketUrl);
      await client.next('call_started');
      client.send({ type: 'user_message', text: 'Hi' });
      await client.next('assistant_message');
      assert.equal(prompts().at(-1), 'You are version one.', 'the version it started with, although the assistant changed before it connected');
      client.send({ type: 'end' });
      await client.closed;
      const first = await callRecord(w, started.id);
      assert.deepEqual([first.assistantVersion, first.agentVersion], [1, null]);

      const next = await w.open(id, { name: 'Ada' });
      next.client.send({ type: 'user_message', text: 'Hi' });
      await next.client.next('assistant_message');
      assert.equal(prompts().at(-1), 'You are version two, Ada.');
      next.client.send({ type: 'end' });
      await next.client.closed;
      assert.equal((await callRecord(w, next.id)).assistantVersion, 2);
      const listed = await w.api('GET', `${w.tenant.orgPath}/calls?assistantId=${id}&sort=createdAt,asc`);
      assert.deepEqual(listed.body.data.map((c: any) => c.assistantVersion), [1, 2]);
    });

    it("a task pinned to an agent version runs that version's configuration; one without a pin runs the current version", async () => {
      const agentId = await w.createAssistant({ name: 'Caller', systemPrompt: 'Pinned prompt for {{firstName}}.', systemPromptGreeting: null }, 'agents');
      const agent = `${w.tenant.orgPath}/agents/${agentId}`;
      assert.equal((await w.api('PATCH', agent, { systemPrompt: 'Current prompt for {{firstName}}.' }, MERGE_PATCH)).status, 200);
      const pinned = await w.api('POST', `${agent}/tasks`, { targetNumber: '+4930123456', userValues: { firstName: 'Ada' }, agentVersion: 1, execute: true });
      assert.equal(pinned.status, 201, JSON.stringify(pinned.body));
      assert.equal(pinned.body.data.agentVersion, 1);
      const done = await settledTask(w, agentId, pinned.body.data.id);
      assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
      assert.equal(prompts().at(-1), 'Pinned prompt for Ada.');
      const attempts = await w.api('GET', `${agent}/tasks/${pinned.body.data.id}/attempts`);
      const callId = attempts.body.data[0].callId;
      const record = await callRecord(w, callId);
      assert.deepEqual([record.agentVersion, record.assistantVersion, record.taskId], [1, null, pinned.body.data.id]);

      const current = await w.api('POST', `${agent}/tasks`, { targetNumber: '+4930123456', userValues: { firstName: 'Grace' }, execute: true });
      assert.equal(current.body.data.agentVersion, null);
      await settledTask(w, agentId, current.body.data.id);
      assert.equal(prompts().at(-1), 'Current prompt for Grace.');
      const currentCall = (await w.api('GET', `${agent}/tasks/${current.body.data.id}/attempts`)).body.data[0].callId;
      assert.equal((await callRecord(w, currentCall)).agentVersion, 2);
    });
  });
}
