import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { LlmForCall } from '../analysis/analysis.llm.ts';
import { Envelope, envelope, responses } from '../../http/envelope.ts';
import { OrgParams } from '../../http/schemas.ts';
import { callerTurn, judge, withTester } from './tester.ts';
import { CallerTurn, CallerTurnRequest, Judgment, JudgmentRequest } from './tester.schemas.ts';

const tags = ['Assistant tests'];
const auth = { scope: 'organization', permission: 'calls:write' } as const;

/**
 * What `parley test` (and the console's test panel) ask of the service besides calls: a caller
 * played by an LLM, and a transcript judged by one, with the LLM calls use. They store nothing.
 */
export const testerRoutes: FastifyPluginAsyncTypebox<{ llmFor: LlmForCall }> = async (app, { llmFor }) => {
  app.post('/assistant-tests/caller-turn', {
    config: { auth },
    schema: {
      tags, operationId: 'simulateCallerTurn', summary: "A test caller's next turn, played by an LLM",
      description: 'Plays the caller of a test (parley test, docs/testing-assistants.md): given who they are, what they want and the ' +
        'conversation so far, answers their next words and whether they hang up. Uses the LLM that calls use (503 when it fails). Stores nothing.',
      params: OrgParams, body: CallerTurnRequest, response: responses(200, Envelope(CallerTurn), [503]),
    },
  }, async (request) => envelope(request, await withTester(llmFor, request.params.organizationId, (tester) => callerTurn(tester, request.body))));

  app.post('/assistant-tests/judgments', {
    config: { auth },
    schema: {
      tags, operationId: 'judgeTestTranscript', summary: "Judge a test's transcript against criteria, with an LLM",
      description: 'Each criterion (a sentence) is judged on its own by the LLM that calls use: passed or not, and why in a sentence. ' +
        'A judge\'s answer that cannot be read is a failed verdict saying so. 503 when the LLM fails. Stores nothing.',
      params: OrgParams, body: JudgmentRequest, response: responses(200, Envelope(Judgment), [503]),
    },
  }, async (request) => envelope(request, { verdicts: await withTester(llmFor, request.params.organizationId, (tester) => judge(tester, request.body)) }));
};
