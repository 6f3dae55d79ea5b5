import { Ajv, type ErrorObject } from 'ajv';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { fillPlaceholders } from '../../calls/template.ts';
import type { AnalysisSetting, Rubric } from '../assistants/after-call.schemas.ts';
import type { CallLlm } from './analysis.llm.ts';
import { dataMessages, retryMessages, successMessages, summaryMessages, type CallForAnalysis } from './analysis.prompt.ts';

export interface DataError {
  message: string;
  errors: { path: string; message: string }[];
  raw: string;
}

export interface AnalysisResult {
  summary: string;
  data: unknown;
  dataError: DataError | null;
  success: boolean | number | string | null;
}

/** Kept of any one answer: a summary, a verdict, a raw answer in dataError. */
const MAX_ANSWER_CHARS = 8_000;

/** The text of a JSON answer: without the Markdown fence models like to put around it. */
export function jsonText(answer: string): string {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(answer);
  return (fenced?.[1] ?? answer).trim();
}

const detail = (error: ErrorObject) => ({ path: error.instancePath.split('/').slice(1).join('.'), message: error.message ?? 'is invalid' });

/** An answer checked against the schema: the value, or what is wrong with it. */
function checkData(validate: ReturnType<Ajv['compile']>, answer: string): { ok: true; value: unknown } | { ok: false; errors: DataError['errors'] } {
  let value: unknown;
  try {
    value = JSON.parse(jsonText(answer));
  } catch {
    return { ok: false, errors: [{ path: '', message: 'is not JSON' }] };
  }
  return validate(value) ? { ok: true, value } : { ok: false, errors: (validate.errors ?? []).slice(0, 20).map(detail) };
}

/** The verdict an answer gives under its rubric; null when it gives none. */
export function verdictOf(rubric: Rubric, answer: string): boolean | number | string | null {
  const text = answer.trim();
  if (rubric === 'descriptive') return text.slice(0, 500) || null;
  if (rubric === 'score_1_10') {
    const score = /\b(10|[1-9])\b/.exec(text);
    return score ? Number(score[1]) : null;
  }
  const word = /\b(true|false|pass|fail|passed|failed|yes|no)\b/i.exec(text)?.[1]?.toLowerCase();
  return word === undefined ? null : ['true', 'pass', 'passed', 'yes'].includes(word);
}

/**
 * Runs an analysis: the summary always, the structured data and the success evaluation when the
 * setting asks for them, one LLM request each (the data's asked again once, with the schema's
 * errors, when the first answer breaks it). The prompts' placeholders are filled from the call's
 * values. An LLM that fails throws: the job tries again later.
 */
export async function analyzeCall(target: CallLlm, setting: AnalysisSetting, call: CallForAnalysis, values: Record<string, unknown>, signal: AbortSignal): Promise<AnalysisResult> {
  const fill = (prompt: string | undefined) => (prompt === undefined ? undefined : fillPlaceholders(prompt, values, 20_000).text);
  const ask = async (messages: ChatCompletionMessageParam[]) =>
    (await target.llm.round({ messages, tools: [], settings: target.settings, toolChoice: 'none', signal, onDelta: () => {} })).text.trim().slice(0, MAX_ANSWER_CHARS);

  const summary = await ask(summaryMessages(call, fill(setting.summary?.prompt)));
  let data: unknown = null;
  let dataError: DataError | null = null;
  if (setting.structuredData) {
    // A fresh Ajv per analysis: the tenant's schema ($id and all) must not stay in a shared one.
    const validate = new Ajv({ strict: false, allErrors: true }).compile(setting.structuredData.schema);
    const asked = dataMessages(call, setting.structuredData.schema, fill(setting.structuredData.prompt));
    let answer = await ask(asked);
    let checked = checkData(validate, answer);
    if (!checked.ok) {
      answer = await ask(retryMessages(asked, answer, checked.errors));
      checked = checkData(validate, answer);
    }
    if (checked.ok) data = checked.value;
    else dataError = { message: 'The answer did not satisfy the schema, twice', errors: checked.errors, raw: answer };
  }
  let success: AnalysisResult['success'] = null;
  if (setting.successEvaluation) {
    const { rubric, prompt } = setting.successEvaluation;
    success = verdictOf(rubric as Rubric, await ask(successMessages(call, rubric as Rubric, fill(prompt))));
  }
  return { summary, data, dataError, success };
}
