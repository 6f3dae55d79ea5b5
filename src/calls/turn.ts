import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ServerFrame } from './frames.ts';
import type { Llm, LlmSettings } from './llm.ts';
import { callToolWebhook, type EgressSend, type ToolCallContext, type ToolCallRequest, type ToolCallResult } from './tool-call.ts';
import { functionTools, type ToolWebhook } from './tools.ts';

/** Rounds of LLM → tools → LLM in one turn; the last round may not call tools, so it must answer. */
export const MAX_ROUNDS = 8;
/** Tool calls still running after this long are announced (a frame, and a filler on voice calls). */
export const TOOL_WAIT_MS = 1_500;

/** What a turn needs from its session. */
export interface TurnHost {
  readonly llm: Llm;
  readonly send: EgressSend;
  readonly settings: LlmSettings;
  readonly tools: readonly ToolWebhook[];
  /** Tool requests use the call's signal (an interruption lets them finish and be recorded). */
  readonly toolContext: ToolCallContext;
  /** Aborted to stop the turn (the caller spoke over the answer, or the call ends): no further LLM round. */
  readonly turnSignal: AbortSignal;
  /** The messages to send the LLM now (the system prompt and a window of the conversation). */
  history(): ChatCompletionMessageParam[];
  /** Adds a message to the conversation. */
  remember(message: ChatCompletionMessageParam): void;
  emit(frame: ServerFrame): void;
  /** Text is streaming out of the LLM (for voice: the next sentence may be spoken). */
  delta(text: string): void;
  /** A complete assistant utterance: sent as assistant_message and kept in the transcript. */
  say(text: string): void;
  recordTool(call: ToolCallRequest, result: ToolCallResult): void;
  /** Tool calls have run for TOOL_WAIT_MS and are not done. */
  toolsSlow(names: string[], elapsedMs: number): void;
}

/**
 * Answers the last user message: streams each round's text, runs the round's tool calls in
 * parallel, hands their results back to the LLM, and asks again until it answers in words.
 */
export async function runTurn(host: TurnHost): Promise<void> {
  const { signal } = host.toolContext;
  const stopped = () => signal.aborted || host.turnSignal.aborted;
  const specs = functionTools(host.tools);
  const byName = new Map(host.tools.map((t) => [t.name, t]));
  for (let round = 0; round < MAX_ROUNDS && !stopped(); round++) {
    const result = await host.llm.round({
      messages: host.history(),
      tools: specs,
      settings: host.settings,
      toolChoice: round === MAX_ROUNDS - 1 ? 'none' : 'auto',
      signal: host.turnSignal,
      onDelta: (text) => host.delta(text),
    });
    // An interrupted round: the session keeps what the caller heard of it, not what the LLM wrote.
    if (stopped()) return;
    if (result.text) host.say(result.text);
    if (!result.toolCalls.length) {
      if (result.text) host.remember({ role: 'assistant', content: result.text });
      return;
    }
    host.remember({
      role: 'assistant',
      content: result.text || null,
      tool_calls: result.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    });
    for (const call of result.toolCalls) host.emit({ type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments });
    const started = performance.now();
    const slow = setTimeout(() => host.toolsSlow(result.toolCalls.map((c) => c.name), Math.round(performance.now() - started)), TOOL_WAIT_MS);
    const results = await Promise.all(
      result.toolCalls.map(async (call) => {
        const outcome = await callToolWebhook(host.send, byName.get(call.name), call, host.toolContext);
        if (!signal.aborted) {
          host.emit({ type: 'tool_result', id: call.id, name: call.name, ok: outcome.ok, statusCode: outcome.statusCode, latencyMs: outcome.latencyMs });
          host.recordTool(call, outcome);
        }
        return outcome;
      }),
    ).finally(() => clearTimeout(slow));
    if (signal.aborted) return;
    // Even after an interruption: the history must answer every tool call it holds.
    result.toolCalls.forEach((call, i) => host.remember({ role: 'tool', tool_call_id: call.id, content: results[i]?.content ?? '' }));
  }
}

/**
 * The last `size` messages of a conversation, starting at a user message so that an assistant
 * tool call is never sent without the tool results that answer it (or the reverse).
 */
export function historyWindow(messages: readonly ChatCompletionMessageParam[], size: number): ChatCompletionMessageParam[] {
  if (messages.length <= size) return [...messages];
  let start = messages.length - size;
  while (start < messages.length && messages[start]?.role !== 'user') start++;
  // One turn longer than the window (many tool rounds): keep the whole turn from its user message.
  if (start === messages.length) start = messages.findLastIndex((m) => m.role === 'user');
  return messages.slice(Math.max(0, start));
}
