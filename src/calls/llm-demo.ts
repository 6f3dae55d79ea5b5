import { setImmediate as yieldTurn } from 'node:timers/promises';
import { demoAnswer } from './demo/rules.ts';
import type { Llm, LlmClientOptions, LlmRound, LlmRoundRequest } from './llm.ts';

/**
 * The built-in demo model (src/calls/demo/): answers from rules in this process, with no network
 * and no account, streamed a word at a time like a real model so the call path is the same.
 */
export function createDemoLlm(_options: LlmClientOptions): Llm {
  return { round: (request) => streamDemo(request) };
}

async function streamDemo(request: LlmRoundRequest): Promise<LlmRound> {
  const answer = demoAnswer(request.messages, request.tools, request.toolChoice);
  for (const piece of answer.text.match(/\S+\s*/g) ?? []) {
    await yieldTurn();
    if (request.signal.aborted) throw new DOMException('the turn was cancelled', 'AbortError');
    request.onDelta(piece);
  }
  return answer;
}
