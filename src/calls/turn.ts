import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ServerFrame } from './frames.ts';
import { controlFunctionTools, offeredControls } from './control-tools.ts';
import { dispatchToolCall, type DispatchResult, type ToolDispatch, type ToolEffect } from './dispatch.ts';
import type { Llm, LlmRound, LlmSettings } from './llm.ts';
import type { ToolCallRequest } from './tool-call.ts';
import { argumentsText } from './tool-arguments.ts';
import { functionTools } from './tools.ts';

/** Rounds of LLM → tools → LLM in one turn; the last round may not call tools, so it must answer. */
export const MAX_ROUNDS = 8;
/** Tool calls still running after this long are announced (a frame, and a filler on voice calls). */
export const TOOL_WAIT_MS = 1_500;

/** What running tool calls needs from the session: the call's tools through ToolDispatch, and its frames and record. */
export interface ToolHost extends ToolDispatch {
  emit(frame: ServerFrame): void;
  recordTool(call: ToolCallRequest, result: DispatchResult): void;
  /** Tool calls have run for TOOL_WAIT_MS and are not done. */
  toolsSlow(names: string[], elapsedMs: number): void;
  /** A tool asked to end the call (end_call, a transfer that worked). */
  apply(effect: ToolEffect): void;
}

/** What a turn needs from its session. */
export interface TurnHost extends ToolHost {
  readonly llm: Llm;
  readonly settings: LlmSettings;
  /** Aborted to stop the turn (the caller spoke over the answer, or the call ends): no further LLM round. */
  readonly turnSignal: AbortSignal;
  /** The messages to send the LLM now (the system prompt and a window of the conversation). */
  history(): ChatCompletionMessageParam[];
  /** Adds a message to the conversation. */
  remember(message: ChatCompletionMessageParam): void;
  /** Text is streaming out of the LLM (for voice: the next sentence may be spoken). */
  delta(text: string): void;
  /** A complete assistant utterance: sent as assistant_message and kept in the transcript. */
  say(text: string): void;
}

/** The function tools a turn offers the LLM: the call's tool webhooks and the call-control tools its transport can do. */
export function turnTools(host: Pick<TurnHost, 'tools' | 'controls' | 'control'>): ChatCompletionFunctionTool[] {
  return [...functionTools(host.tools), ...controlFunctionTools(offeredControls(host.controls, host.control))];
}

/** The first round of a turn, when it was started before the turn was confirmed (smart endpointing's speculation). */
export type FirstRound = (onDelta: (text: string) => void, turnSignal: AbortSignal) => Promise<LlmRound>;

/**
 * Answers the last user message: streams each round's text, runs the round's tool calls in
 * parallel, hands their results back to the LLM, and asks again until it answers in words.
 */
export async function runTurn(host: TurnHost, first?: FirstRound): Promise<void> {
  const { signal } = host.toolContext;
  const stopped = () => signal.aborted || host.turnSignal.aborted;
  const specs = turnTools(host);
  for (let round = 0; round < MAX_ROUNDS && !stopped(); round++) {
    const result = round === 0 && first ? await first((text) => host.delta(text), host.turnSignal) : await host.llm.round({
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
      // Arguments refused as too deep or too large are not sent back every round: the tool result says why.
      tool_calls: result.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: argumentsText(c.arguments) } })),
    });
    const results = await runToolCalls(host, result.toolCalls);
    if (signal.aborted) return;
    // Even after an interruption: the call ends as the tool said, and the LLM is not asked again.
    const effect = results.find((r) => r.effect)?.effect;
    if (effect) return host.apply(effect);
    // Even after an interruption: the history must answer every tool call it holds.
    result.toolCalls.forEach((call, i) => host.remember({ role: 'tool', tool_call_id: call.id, content: results[i]?.content ?? '' }));
  }
}

/**
 * Runs tool calls in parallel (webhooks and call-control tools, through dispatchToolCall), with their `tool_call` and `tool_result`
 * frames, their record, and a `toolsSlow` call when they take long. The results, in order.
 */
export async function runToolCalls(host: ToolHost, calls: readonly ToolCallRequest[]): Promise<DispatchResult[]> {
  const { signal } = host.toolContext;
  for (const call of calls) host.emit({ type: 'tool_call', id: call.id, name: call.name, arguments: argumentsText(call.arguments) });
  const started = performance.now();
  const slow = setTimeout(() => host.toolsSlow(calls.map((c) => c.name), Math.round(performance.now() - started)), TOOL_WAIT_MS);
  return Promise.all(
    calls.map(async (call) => {
      const outcome = await dispatchToolCall(host, call);
      if (!signal.aborted) {
        host.emit({ type: 'tool_result', id: call.id, name: call.name, ok: outcome.ok, statusCode: outcome.statusCode, latencyMs: outcome.latencyMs });
        host.recordTool(call, outcome);
      }
      return outcome;
    }),
  ).finally(() => clearTimeout(slow));
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
