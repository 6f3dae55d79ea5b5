import type { Conversation, Line } from './conversation.ts';
import { argumentsMatch } from './matching.ts';
import type { TestCase, ToolExpectation } from './suite.ts';

/** One thing a test checked: what, whether it held, and (when it did not, or for a judge) why. */
export interface Check {
  what: string;
  passed: boolean;
  detail?: string;
}

export interface Verdict {
  criterion: string;
  passed: boolean;
  reason: string;
}

const said = (transcript: readonly Line[]) => transcript.filter((l) => l.role === 'assistant').map((l) => l.text).join('\n');
const describeTool = (t: ToolExpectation) =>
  `${t.tool}${t.arguments ? ` ${JSON.stringify(t.arguments)}` : ''}${t.argumentsMatch ? ` matching /${t.argumentsMatch}/` : ''}`;
const listCalls = (c: Conversation) => (c.toolCalls.length ? c.toolCalls.map((t) => `${t.name} ${t.arguments}`).join('; ') : 'no tool was called');

/**
 * The expectations of a test that need no LLM, checked against its call: tools called and not,
 * what the assistant said (contains and not: case-insensitive; matches: the expression as written),
 * how the call ended, and how many turns the caller took. The call's own problems (an unmocked
 * tool, an error, a timeout) fail it too.
 */
export function checkExpectations(test: TestCase, conversation: Conversation): Check[] {
  const { expect } = test;
  const text = said(conversation.transcript);
  const lower = text.toLowerCase();
  const checks: Check[] = conversation.problems.map((problem) => ({ what: 'the call ran cleanly', passed: false, detail: problem }));
  for (const tool of expect.toolsCalled ?? []) {
    const passed = conversation.toolCalls.some((c) => c.name === tool.tool && argumentsMatch(tool, c.arguments));
    checks.push({ what: `called ${describeTool(tool)}`, passed, ...(passed ? {} : { detail: listCalls(conversation) }) });
  }
  for (const name of expect.toolsNotCalled ?? []) {
    const calls = conversation.toolCalls.filter((c) => c.name === name);
    checks.push({ what: `did not call ${name}`, passed: !calls.length, ...(calls.length ? { detail: `called ${calls.map((c) => `${c.name} ${c.arguments}`).join('; ')}` } : {}) });
  }
  for (const words of expect.transcriptContains ?? []) {
    const passed = lower.includes(words.toLowerCase());
    checks.push({ what: `said "${words}"`, passed, ...(passed ? {} : { detail: 'the assistant never said it' }) });
  }
  for (const words of expect.transcriptNotContains ?? []) {
    const passed = !lower.includes(words.toLowerCase());
    checks.push({ what: `never said "${words}"`, passed, ...(passed ? {} : { detail: 'the assistant said it' }) });
  }
  for (const source of expect.transcriptMatches ?? []) {
    const passed = new RegExp(source).test(text);
    checks.push({ what: `said something matching /${source}/`, passed, ...(passed ? {} : { detail: 'nothing the assistant said matches' }) });
  }
  if (expect.endedByEndCall !== undefined) {
    const byEndCall = conversation.endReason === 'assistant_ended';
    checks.push({
      what: expect.endedByEndCall ? 'the assistant hung up (end_call)' : 'the assistant did not hang up',
      passed: byEndCall === expect.endedByEndCall,
      ...(byEndCall === expect.endedByEndCall ? {} : { detail: `the call ended: ${conversation.endReason}` }),
    });
  }
  if (expect.maxTurns !== undefined) {
    const passed = conversation.callerTurns <= expect.maxTurns;
    checks.push({ what: `at most ${expect.maxTurns} turns`, passed, ...(passed ? {} : { detail: `the caller took ${conversation.callerTurns}` }) });
  }
  return checks;
}

/** A judge's verdict as a check: its reason is shown whether it passed or not. */
export const verdictCheck = (v: Verdict): Check => ({ what: `judged: ${v.criterion}`, passed: v.passed, detail: v.reason });
