import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { LlmRound } from '../llm.ts';
import { argumentsFrom, matchScore, wordsOf } from './words.ts';

/** Said once per call, in the demo model's first answer in words: what it is, and how to connect a real one. */
const DEMO_NOTICE =
  'I am Parley\'s built-in demo model, answering from simple rules. To talk with a real model, set OPENAI_BASE_URL ' +
  '(Ollama or another OpenAI-compatible server) or OPENAI_API_KEY and restart Parley.';

const GOODBYE = /\b(bye|goodbye|good-bye|hang up|that'?s all|see you)\b/i;
const HELLO = /\b(hello|hi|hey|good (morning|afternoon|evening))\b/i;

type Message = ChatCompletionMessageParam;

const textOf = (content: Message['content'] | undefined): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((p) => ('text' in p ? p.text : '')).join('') : '';

/**
 * The demo model's answer to a conversation, from rules: tool results are read back; a goodbye
 * calls end_call; words that match a tool's name or description call it with arguments taken
 * from them (or ask for what is missing); a greeting greets. Deterministic, no network.
 */
export function demoAnswer(messages: readonly Message[], tools: readonly ChatCompletionFunctionTool[], toolChoice: 'auto' | 'none'): LlmRound {
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  const since = messages.slice(lastUser + 1);
  const noticed = messages.some((m) => m.role === 'assistant' && textOf(m.content).includes(DEMO_NOTICE));
  const words = (text: string) => ({ text: noticed ? text : `${text} ${DEMO_NOTICE}`, toolCalls: [] });
  if (since.some((m) => m.role === 'tool')) return words(readBack(since));
  const said = lastUser >= 0 ? textOf(messages[lastUser]!.content) : '';
  if (toolChoice === 'auto') {
    const chosen = chooseTool(said, tools);
    if (chosen && 'call' in chosen) return { text: '', toolCalls: [{ id: `demo_${messages.length}`, name: chosen.call, arguments: JSON.stringify(chosen.args) }] };
    if (chosen) return words(`To use ${chosen.ask.tool} I need the ${chosen.ask.missing.join(' and the ')}: what is it?`);
  }
  if (GOODBYE.test(said)) return words('Goodbye!');
  const offer = offerOf(tools);
  if (!said || HELLO.test(said)) return words(`Hello!${offer}`);
  return words(`You said: "${said.trim()}".${offer}`);
}

type Choice = { call: string; args: Record<string, unknown> } | { ask: { tool: string; missing: string[] } };

function chooseTool(said: string, tools: readonly ChatCompletionFunctionTool[]): Choice | null {
  if (GOODBYE.test(said)) {
    const hangUp = tools.find((t) => t.function.name === 'end_call') ?? tools.find((t) => /hang up/i.test(t.function.description ?? ''));
    return hangUp ? { call: hangUp.function.name, args: { message: 'Goodbye!' } } : null;
  }
  const heard = new Set(wordsOf(said));
  let best: { tool: ChatCompletionFunctionTool; score: number } | null = null;
  for (const tool of tools) {
    const score = matchScore(tool, heard);
    if (score > 0 && score > (best?.score ?? 0)) best = { tool, score };
  }
  if (!best) return null;
  const { args, missing } = argumentsFrom(best.tool, said);
  return missing.length ? { ask: { tool: best.tool.function.name, missing } } : { call: best.tool.function.name, args };
}

/** The tool results of this turn in a sentence each: "lookup_order answered: order A-17, status shipped." */
function readBack(since: readonly Message[]): string {
  const names = new Map<string, string>();
  for (const m of since) if (m.role === 'assistant') for (const call of m.tool_calls ?? []) if (call.type === 'function') names.set(call.id, call.function.name);
  return since
    .filter((m) => m.role === 'tool')
    .map((m) => `${names.get(m.tool_call_id) ?? 'The tool'} answered: ${plainly(textOf(m.content))}.`)
    .join(' ');
}

/** A JSON object as "key value, key value"; anything else as it is (the first 300 characters). */
function plainly(content: string): string {
  try {
    const value: unknown = JSON.parse(content);
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return Object.entries(value).map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join(', ').slice(0, 300);
    }
  } catch {
    // not JSON: read as it is
  }
  return content.trim().replace(/\.$/, '').slice(0, 300);
}

function offerOf(tools: readonly ChatCompletionFunctionTool[]): string {
  const own = tools.filter((t) => t.function.name !== 'end_call');
  if (!own.length) return '';
  return ` I can use ${own.map((t) => `${t.function.name} (${t.function.description ?? 'no description'})`).join(', ')}: mention what you need.`;
}
