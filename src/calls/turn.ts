import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ServerFrame } from './frames.ts';
import type { Llm, LlmSettings } from './llm.ts';
import { callToolWebhook, type EgressSend, type ToolCallContext, type ToolCallRequest, type ToolCallResult } from './tool-call.ts';
import { functionTools, type ToolWebhook } from './tools.ts';

/** Rounds of LLM → tools → LLM in one turn; the last round may not call tools, so it must answer. */
export const MAX_ROUNDS = 8;

/** What a turn needs from its session. */
export interface TurnHost {
  readonly llm: Llm;
  readonly send: EgressSend;
  readonly settings: LlmSettings;
  readonly tools: readonly ToolWebhook[];
  readonly messages: ChatCompletionMessageParam[];
  readonly toolContext: ToolCallContext;
  emit(frame: ServerFrame): void;
  /** A complete assistant utterance: sent as assistant_message and kept in the transcript (not in messages). */
  say(text: string): void;
  recordTool(call: ToolCallRequest, result: ToolCallResult): void;
}

/**
 * Answers the last user message: streams each round's text, runs the round's tool calls in
 * parallel, hands their results back to the LLM, and asks again until it answers in words.
 */
export async function runTurn(host: TurnHost): Promise<void> {
  const { signal } = host.toolContext;
  const specs = functionTools(host.tools);
  const byName = new Map(host.tools.map((t) => [t.name, t]));
  for (let round = 0; round < MAX_ROUNDS && !signal.aborted; round++) {
    const result = await host.llm.round({
      messages: host.messages,
      tools: specs,
      settings: host.settings,
      toolChoice: round === MAX_ROUNDS - 1 ? 'none' : 'auto',
      signal,
      onDelta: (text) => host.emit({ type: 'assistant_delta', text }),
    });
    if (signal.aborted) return;
    if (result.text) host.say(result.text);
    if (!result.toolCalls.length) {
      if (result.text) host.messages.push({ role: 'assistant', content: result.text });
      return;
    }
    host.messages.push({
      role: 'assistant',
      content: result.text || null,
      tool_calls: result.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    });
    for (const call of result.toolCalls) host.emit({ type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments });
    const results = await Promise.all(
      result.toolCalls.map(async (call) => {
        const outcome = await callToolWebhook(host.send, byName.get(call.name), call, host.toolContext);
        if (!signal.aborted) {
          host.emit({ type: 'tool_result', id: call.id, name: call.name, ok: outcome.ok, statusCode: outcome.statusCode, latencyMs: outcome.latencyMs });
          host.recordTool(call, outcome);
        }
        return outcome;
      }),
    );
    if (signal.aborted) return;
    result.toolCalls.forEach((call, i) => host.messages.push({ role: 'tool', tool_call_id: call.id, content: results[i]?.content ?? '' }));
  }
}
