import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { describeLlmFailure, type Llm, type LlmSettings } from '../../calls/llm.ts';
import { AppError } from '../../http/errors.ts';
import { isCallLlm, type LlmForCall } from '../analysis/analysis.llm.ts';
import type { CallerTurn, CallerTurnRequest, JudgmentRequest, Verdict } from './tester.schemas.ts';

/** The LLM that plays callers and judges transcripts, and how. */
export interface Tester {
  llm: Llm;
  caller: LlmSettings;
  judge: LlmSettings;
}

/**
 * Which LLM plays the caller of a test and judges its transcript: the organization's LLM as the
 * analysis of calls resolves it for a strategy that names no LLM (analysis.llm.ts: the platform's
 * OPENAI_* endpoint and its default model). A caller
 * varies a little (temperature 0.7), a judge does not (0).
 */
export async function testerFor(llmFor: LlmForCall, organizationId: string): Promise<Tester & { close(): Promise<void> }> {
  const chosen = await llmFor({ organizationId, strategyId: null });
  if (!isCallLlm(chosen)) throw new AppError(503, `The tester LLM cannot be used: ${chosen.message}`);
  const { llm, settings } = chosen;
  return { llm, caller: { model: settings.model, temperature: 0.7 }, judge: { model: settings.model, temperature: 0 }, close: () => chosen.close() };
}

/** Runs `use` with the organization's tester LLM, and lets go of the LLM's clients afterwards. */
export async function withTester<T>(llmFor: LlmForCall, organizationId: string, use: (tester: Tester) => Promise<T>): Promise<T> {
  const tester = await testerFor(llmFor, organizationId);
  try {
    return await use(tester);
  } finally {
    await tester.close();
  }
}

/** The words the caller ends with to hang up. */
export const HANG_UP = '[HANG UP]';
const TIMEOUT_MS = 60_000;

async function complete(llm: Llm, settings: LlmSettings, messages: ChatCompletionMessageParam[]): Promise<string> {
  try {
    const round = await llm.round({ messages, tools: [], settings, toolChoice: 'none', signal: AbortSignal.timeout(TIMEOUT_MS), onDelta: () => {} });
    return round.text.trim();
  } catch (err) {
    const failure = describeLlmFailure(err);
    throw new AppError(503, `The tester LLM failed (${failure.statusCode ? `HTTP ${failure.statusCode}: ` : ''}${failure.message})`);
  }
}

const callerPrompt = (request: CallerTurnRequest) => [
  'You play a caller phoning a voice assistant, to test it. Stay in character; never say you are an AI or a test.',
  `Who you are: ${request.persona}`,
  request.goal ? `What you want from the call: ${request.goal}` : 'You have no particular goal: react naturally.',
  'Answer with the caller\'s next words only: one short spoken turn, no stage directions.',
  `When your goal is reached, or the call has nothing more to give you, say goodbye and end with ${HANG_UP}.`,
].join('\n');

/** The caller's next turn: the assistant's lines are what the caller hears, the caller's are its own. */
export async function callerTurn(tester: Tester, request: CallerTurnRequest): Promise<CallerTurn> {
  const conversation: ChatCompletionMessageParam[] = request.transcript.map((line) =>
    line.role === 'assistant' ? { role: 'user', content: line.text } : { role: 'assistant', content: line.text });
  if (conversation.at(-1)?.role !== 'user') conversation.push({ role: 'user', content: '(The assistant is silent, waiting for you to speak.)' });
  const text = await complete(tester.llm, tester.caller, [{ role: 'system', content: callerPrompt(request) }, ...conversation]);
  const hangUp = text.includes(HANG_UP);
  const words = text.replaceAll(HANG_UP, '').trim();
  return { text: words || null, hangUp };
}

const judgePrompt = [
  'You judge a conversation between a caller and a voice assistant against one criterion.',
  'Answer with a JSON object and nothing else: {"passed": true or false, "reason": "one sentence"}.',
].join('\n');

function transcriptText(request: JudgmentRequest): string {
  const lines = request.transcript.map((line) => `${line.role}: ${line.text}`);
  const tools = (request.toolCalls ?? []).map((call) => `- ${call.name} ${call.arguments}`);
  return [...lines, ...(tools.length ? ['', 'Tools the assistant called:', ...tools] : [])].join('\n');
}

/** The first JSON object in a model's answer, read as a verdict; null when there is none. */
function readVerdict(text: string): { passed: boolean; reason: string } | null {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) return null;
  try {
    const value = JSON.parse(text.slice(start, end + 1)) as { passed?: unknown; reason?: unknown };
    if (typeof value.passed !== 'boolean') return null;
    return { passed: value.passed, reason: typeof value.reason === 'string' ? value.reason.slice(0, 1000) : '' };
  } catch {
    return null;
  }
}

/** Each criterion judged on its own (in parallel): passed or not, and why. */
export async function judge(tester: Tester, request: JudgmentRequest): Promise<Verdict[]> {
  const conversation = transcriptText(request);
  return Promise.all(request.criteria.map(async (criterion) => {
    const answer = await complete(tester.llm, tester.judge, [
      { role: 'system', content: judgePrompt },
      { role: 'user', content: `Conversation:\n${conversation}\n\nCriterion: ${criterion}` },
    ]);
    const verdict = readVerdict(answer);
    return verdict
      ? { criterion, ...verdict }
      : { criterion, passed: false, reason: `The judge's answer could not be read as a verdict: ${JSON.stringify(answer.slice(0, 200))}` };
  }));
}
