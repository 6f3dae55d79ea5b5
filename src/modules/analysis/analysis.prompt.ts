import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ToolInvocation, TranscriptEntry } from '../../calls/record.ts';
import type { Rubric } from '../assistants/after-call.schemas.ts';

/** What the analysis reads of a call. */
export interface CallForAnalysis {
  /** The assistant's prompt, placeholders filled from the call's values: what the call was for. */
  systemPrompt: string | null;
  transcript: readonly TranscriptEntry[];
  toolInvocations: readonly ToolInvocation[];
  startedAt: string | null;
}

const SYSTEM = 'You analyse a finished phone call between an AI voice assistant and a caller. You are given the assistant\'s instructions, ' +
  'then the call: what each side said, the keys the caller pressed and the tools the assistant used with their results. Answer exactly as asked, ' +
  'with nothing else.';

export const SUMMARY_PROMPT = 'Summarise the call in two or three sentences: who called, what they wanted, and what was agreed or done.';
export const DATA_PROMPT = 'Extract the data the schema describes from the call.';
export const SUCCESS_PROMPT = 'Judge whether the call achieved what the assistant\'s instructions set out to do.';

const RUBRIC_ANSWER: Record<Rubric, string> = {
  pass_fail: 'Answer with one word: true if it succeeded, false if it did not.',
  score_1_10: 'Answer with one integer from 1 (complete failure) to 10 (complete success), and nothing else.',
  descriptive: 'Answer in a few words (at most one short sentence).',
};

const clock = (from: string | null, at: string) => {
  const seconds = from ? Math.max(0, Math.round((Date.parse(at) - Date.parse(from)) / 1000)) : 0;
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
};

/** The call as lines of text, in time order: speech, keys, and each tool call with its outcome and the result the record keeps. */
export function callText(call: CallForAnalysis): string {
  const lines: { at: string; text: string }[] = [
    ...call.transcript.map((e) => ({
      at: e.at,
      text: e.role === 'dtmf' ? `Caller pressed keys: ${e.text}` : `${e.role === 'user' ? 'Caller' : 'Assistant'}: ${e.text}${e.interrupted ? ' [interrupted by the caller]' : ''}`,
    })),
    ...call.toolInvocations.map((t) => ({
      at: t.at,
      text: `Tool ${t.name}(${JSON.stringify(t.arguments)}) -> ${t.ok ? 'ok' : 'failed'} (${t.outcome}${t.statusCode ? `, HTTP ${t.statusCode}` : ''})${t.result ? `: ${t.result}` : ''}`,
    })),
  ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return lines.map((l) => `[${clock(call.startedAt, l.at)}] ${l.text}`).join('\n');
}

function context(call: CallForAnalysis): string {
  return `The assistant's instructions:\n${call.systemPrompt ?? '(none)'}\n\nThe call:\n${callText(call) || '(nothing was said)'}`;
}

export function summaryMessages(call: CallForAnalysis, prompt: string | undefined): ChatCompletionMessageParam[] {
  return [{ role: 'system', content: SYSTEM }, { role: 'user', content: `${context(call)}\n\n${prompt ?? SUMMARY_PROMPT}` }];
}

export function dataMessages(call: CallForAnalysis, schema: unknown, prompt: string | undefined): ChatCompletionMessageParam[] {
  return [{ role: 'system', content: SYSTEM }, {
    role: 'user',
    content: `${context(call)}\n\n${prompt ?? DATA_PROMPT}\nAnswer with one JSON value that satisfies this JSON Schema, and nothing else:\n${JSON.stringify(schema)}`,
  }];
}

export function successMessages(call: CallForAnalysis, rubric: Rubric, prompt: string | undefined): ChatCompletionMessageParam[] {
  return [{ role: 'system', content: SYSTEM }, { role: 'user', content: `${context(call)}\n\n${prompt ?? SUCCESS_PROMPT}\n${RUBRIC_ANSWER[rubric]}` }];
}

/** Asking again, once, after an answer that broke the schema: the answer and what was wrong with it. */
export function retryMessages(asked: ChatCompletionMessageParam[], answer: string, errors: { path: string; message: string }[]): ChatCompletionMessageParam[] {
  const list = errors.map((e) => `- ${e.path || '(the whole value)'}: ${e.message}`).join('\n');
  return [...asked, { role: 'assistant', content: answer }, {
    role: 'user', content: `That answer does not satisfy the schema:\n${list}\nAnswer again with one JSON value that satisfies it, and nothing else.`,
  }];
}
