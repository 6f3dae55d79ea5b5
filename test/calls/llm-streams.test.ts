// Streams that real OpenAI-compatible servers send, against a fake server that sends them byte
// for byte as they do: the LLM client must put every tool call together, keyed by id when a
// piece has one and by index otherwise.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Llm } from '../../src/calls/llm.ts';
import { createLlm } from '../../src/calls/llm-openai.ts';
import { startLlmServer, type LlmServer } from './support/llm-server.ts';

const fn = (name: string, args: string) => ({ type: 'function', function: { name, arguments: args } });

describe('the LLM client puts streamed tool calls together as real servers send them', () => {
  let server: LlmServer;
  let llm: Llm;
  before(async () => {
    server = await startLlmServer();
    llm = createLlm({ baseUrl: server.baseUrl, apiKey: null, firstTokenMs: 10_000, tokenGapMs: 10_000 });
  });
  after(() => server.close());

  const round = () => llm.round({
    messages: [{ role: 'user', content: 'Where are orders A-1 and B-2?' }],
    tools: [{ type: 'function', function: { name: 'lookup_order', parameters: { type: 'object', properties: {} } } }],
    settings: { model: 'test-model', temperature: undefined },
    toolChoice: 'auto', signal: new AbortController().signal, onDelta: () => {},
  });

  it('OpenAI: id and name once, the arguments in parts under one index per call', async () => {
    server.respond = () => ({ deltas: [
      { tool_calls: [{ index: 0, id: 'call_a', ...fn('lookup_order', '') }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"order' } }] },
      { tool_calls: [{ index: 1, id: 'call_b', ...fn('lookup_order', '') }] },
      { tool_calls: [{ index: 0, function: { arguments: 'Number":"A-1"}' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{"orderNumber":"B-2"}' } }] },
    ] });
    assert.deepEqual((await round()).toolCalls, [
      { id: 'call_a', name: 'lookup_order', arguments: '{"orderNumber":"A-1"}' },
      { id: 'call_b', name: 'lookup_order', arguments: '{"orderNumber":"B-2"}' },
    ]);
  });

  it('no index at all (older Ollama, Gemini, mistral.rs): each whole call on its own, none lost', async () => {
    server.respond = () => ({ deltas: [
      { tool_calls: [{ id: 'call_1', ...fn('lookup_order', '{"orderNumber":"A-1"}') }] },
      { tool_calls: [{ id: 'call_2', ...fn('lookup_order', '{"orderNumber":"B-2"}') }] },
    ] });
    assert.deepEqual((await round()).toolCalls, [
      { id: 'call_1', name: 'lookup_order', arguments: '{"orderNumber":"A-1"}' },
      { id: 'call_2', name: 'lookup_order', arguments: '{"orderNumber":"B-2"}' },
    ]);
    // Without ids either: each piece naming a function starts a call, and each gets an id.
    server.respond = () => ({ deltas: [
      { tool_calls: [fn('lookup_order', '{"orderNumber":"A-1"}')] },
      { tool_calls: [fn('lookup_order', '{"orderNumber":"B-2"}')] },
    ] });
    const calls = (await round()).toolCalls;
    assert.deepEqual(calls.map((c) => c.arguments), ['{"orderNumber":"A-1"}', '{"orderNumber":"B-2"}']);
    assert.ok(calls.every((c) => /^call_[0-9a-f]{32}$/.test(c.id)) && calls[0]!.id !== calls[1]!.id);
  });

  it('two calls both at index 0 with different ids (current Ollama): two calls, not one merged', async () => {
    server.respond = () => ({ deltas: [
      { tool_calls: [{ index: 0, id: 'call_x', ...fn('lookup_order', '{"orderNumber":"A-1"}') }] },
      { tool_calls: [{ index: 0, id: 'call_y', ...fn('lookup_order', '{"orderNumber":"B-2"}') }] },
    ] });
    assert.deepEqual((await round()).toolCalls, [
      { id: 'call_x', name: 'lookup_order', arguments: '{"orderNumber":"A-1"}' },
      { id: 'call_y', name: 'lookup_order', arguments: '{"orderNumber":"B-2"}' },
    ]);
  });
});
