import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/*
 * The session's conversation (OpenAI chat message shapes) as Anthropic's Messages API takes it:
 * system prompts in the top-level `system`, an assistant's tool calls as `tool_use` blocks, tool
 * results as `tool_result` blocks of the next user message, tools with an `input_schema`.
 */

type TextBlock = { type: 'text'; text: string };
type ToolUseBlock = { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };
type ToolResultBlock = { type: 'tool_result'; tool_use_id: string; content: string };
type Block = TextBlock | ToolUseBlock | ToolResultBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

/** A message's text, whatever shape its content has. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: { type?: string; text?: string }) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}

/** Tool arguments as the object Anthropic wants; a model's arguments that were not a JSON object become {}. */
function inputOf(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args || '{}');
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The system prompt and the messages. Consecutive messages of one role are joined into one
 * (the API would combine them; joined here, a turn's tool results travel together right after
 * the tool calls they answer). Empty text is left out: the API refuses empty text blocks.
 */
export function anthropicConversation(messages: readonly ChatCompletionMessageParam[]): { system: string | null; messages: AnthropicMessage[] } {
  const system: string[] = [];
  const out: AnthropicMessage[] = [];
  const add = (role: AnthropicMessage['role'], blocks: Block[]) => {
    if (!blocks.length) return;
    const last = out.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  const text = (value: string): Block[] => (value ? [{ type: 'text', text: value }] : []);
  for (const message of messages) {
    if (message.role === 'system' || message.role === 'developer') system.push(textOf(message.content));
    else if (message.role === 'user') add('user', text(textOf(message.content)));
    else if (message.role === 'tool') add('user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: textOf(message.content) }]);
    else if (message.role === 'assistant') {
      const calls = (message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [call] : []));
      add('assistant', [
        ...text(textOf(message.content)),
        ...calls.map((call): ToolUseBlock => ({ type: 'tool_use', id: call.id, name: call.function.name, input: inputOf(call.function.arguments) })),
      ]);
    }
  }
  return { system: system.filter(Boolean).join('\n\n') || null, messages: out };
}

export function anthropicTools(tools: readonly ChatCompletionFunctionTool[]): AnthropicTool[] {
  return tools.map(({ function: f }) => ({
    name: f.name,
    ...(f.description ? { description: f.description } : {}),
    input_schema: f.parameters ?? { type: 'object', properties: {} },
  }));
}
