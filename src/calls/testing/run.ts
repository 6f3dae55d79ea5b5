import { ParleyError, type ScopedClient } from '@parley/sdk';
import { holdConversation, type Conversation, type Line, type OpenCallSocket } from './conversation.ts';
import { checkExpectations, verdictCheck, type Check } from './expectations.ts';
import type { Suite, TestCase } from './suite.ts';

/*
 * One test of a suite run against the service through its public API (the SDK): shared by
 * `parley test` and the console's Tests page, which run it the same way, the CLI over `ws`,
 * the console over the browser's WebSocket.
 */

export type Organization = ScopedClient<'vendorId' | 'organizationId'>;

/** The assistant or agent a suite tests, as the test's calls need it. */
export interface Target {
  kind: 'assistant' | 'agent';
  id: string;
  webhooks: Set<string>;
  greets: boolean;
}

interface Configuration {
  systemPromptGreeting?: string | null;
  extensions?: readonly { type: string; parameters?: unknown }[];
}

/** What a test needs of the assistant's (or agent's) configuration: its tool webhooks, whether it greets. */
export function targetOf(kind: Target['kind'], id: string, configuration: Configuration): Target {
  const webhooks = new Set((configuration.extensions ?? []).filter((e) => e.type === 'tool_webhook')
    .map((e) => (e.parameters as { name?: string } | undefined)?.name).filter((n): n is string => typeof n === 'string'));
  return { kind, id, webhooks, greets: Boolean(configuration.systemPromptGreeting?.trim()) };
}

/** One test as it ran. */
export interface TestResult {
  file: string;
  target: string;
  name: string;
  passed: boolean;
  checks: Check[];
  callId: string | null;
  endReason: string;
  transcript: Line[];
  ms: number;
}

const problemOf = (err: unknown) => (err instanceof ParleyError ? `${err.message} (HTTP ${err.status} ${err.code})` : (err as Error).message);

/**
 * One test: a call started with `clientTools` (the mocks answer its tool webhooks), the
 * conversation held, its expectations checked, its criteria judged (by the service's LLM).
 */
export async function runTest(org: Organization, target: Target, suite: Suite, test: TestCase, options: { version: number | null; timeoutMs: number; openSocket: OpenCallSocket }): Promise<TestResult> {
  const started = performance.now();
  const body = { clientTools: true, ...(test.userValues ? { userValues: test.userValues } : {}), ...(options.version ? { version: options.version } : {}) };
  let conversation: Conversation;
  try {
    const call = target.kind === 'agent'
      ? await org.startAgentCall({ path: { agentId: target.id }, body })
      : await org.startAssistantCall({ path: { assistantId: target.id }, body });
    const { persona, goal } = test.caller;
    conversation = await holdConversation({
      websocketUrl: call.websocketUrl, openSocket: options.openSocket, webhooks: target.webhooks, greets: target.greets, timeoutMs: options.timeoutMs,
      callerTurn: (transcript) => org.simulateCallerTurn({ body: { persona: persona ?? '', ...(goal ? { goal } : {}), transcript } }),
    }, test);
  } catch (err) {
    conversation = { callId: null, transcript: [], toolCalls: [], endReason: 'not_started', callerTurns: 0, problems: [`the call could not start: ${problemOf(err)}`] };
  }
  const checks: Check[] = checkExpectations(test, conversation);
  const criteria = test.expect.criteria ?? [];
  if (criteria.length && conversation.callId) {
    try {
      const judged = await org.judgeTestTranscript({
        body: { transcript: conversation.transcript, toolCalls: conversation.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })), criteria },
      });
      checks.push(...judged.verdicts.map(verdictCheck));
    } catch (err) {
      checks.push(...criteria.map((criterion) => ({ what: `judged: ${criterion}`, passed: false, detail: `the judge failed: ${problemOf(err)}` })));
    }
  }
  return {
    file: suite.file, target: suite.target, name: test.name, passed: checks.every((c) => c.passed), checks,
    callId: conversation.callId, endReason: conversation.endReason, transcript: conversation.transcript, ms: performance.now() - started,
  };
}
