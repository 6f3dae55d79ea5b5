import type { ScopedClient } from '@parley/sdk';
import { ConfigError } from '../../config.ts';
import { ParleyError } from '../api-client.ts';
import { holdConversation, type Conversation } from './conversation.ts';
import { checkExpectations, verdictCheck, type Check } from './expectations.ts';
import type { TestResult } from './report.ts';
import type { Suite, TestCase } from './suite.ts';

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

function targetOf(kind: Target['kind'], id: string, configuration: Configuration): Target {
  const webhooks = new Set((configuration.extensions ?? []).filter((e) => e.type === 'tool_webhook')
    .map((e) => (e.parameters as { name?: string } | undefined)?.name).filter((n): n is string => typeof n === 'string'));
  return { kind, id, webhooks, greets: Boolean(configuration.systemPromptGreeting?.trim()) };
}

/**
 * The assistant (or agent) of that name, at the version asked for (its configuration then: its
 * tool webhooks, its greeting). One that does not exist is a ConfigError (a usage error).
 */
export async function resolveTarget(org: Organization, kind: Target['kind'], name: string, version: number | null): Promise<Target> {
  let id: string | null = null;
  const items = kind === 'agent' ? org.paginate('listAgents') : org.paginate('listAssistants');
  for await (const item of items) {
    if (item.name === name) {
      id = item.id;
      break;
    }
  }
  if (!id) throw new ConfigError(`no ${kind} is named "${name}" in this organization`);
  if (version === null) {
    const current = kind === 'agent' ? await org.getAgent({ path: { agentId: id } }) : await org.getAssistant({ path: { assistantId: id } });
    return targetOf(kind, id, current);
  }
  try {
    const at = kind === 'agent'
      ? await org.getAgentVersion({ path: { agentId: id, version } })
      : await org.getAssistantVersion({ path: { assistantId: id, version } });
    return targetOf(kind, id, at.configuration);
  } catch (err) {
    if (err instanceof ParleyError && err.status === 404) throw new ConfigError(`the ${kind} "${name}" has no version ${version} (--version)`);
    throw err;
  }
}

const problemOf = (err: unknown) => (err instanceof ParleyError ? `${err.message} (HTTP ${err.status} ${err.code})` : (err as Error).message);

/**
 * One test: a call started with `clientTools` (the mocks answer its tool webhooks), the
 * conversation held, its expectations checked, its criteria judged (by the service's LLM).
 */
export async function runTest(org: Organization, target: Target, suite: Suite, test: TestCase, options: { version: number | null; timeoutMs: number }): Promise<TestResult> {
  const started = performance.now();
  const body = { clientTools: true, ...(test.userValues ? { userValues: test.userValues } : {}), ...(options.version ? { version: options.version } : {}) };
  let conversation: Conversation;
  try {
    const call = target.kind === 'agent'
      ? await org.startAgentCall({ path: { agentId: target.id }, body })
      : await org.startAssistantCall({ path: { assistantId: target.id }, body });
    const { persona, goal } = test.caller;
    conversation = await holdConversation({
      websocketUrl: call.websocketUrl, webhooks: target.webhooks, greets: target.greets, timeoutMs: options.timeoutMs,
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
