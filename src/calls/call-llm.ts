import type { Llm } from './llm.ts';
import type { LlmChoice, LlmPlan } from './llm-plan.ts';
import { descriptorOf } from './providers/registry.ts';
import type { CallRuntime } from './runtime.ts';

/** The client of one choice: the platform's shared one, or one of the call's own for a provider of the registry. */
export function clientOf(choice: LlmChoice, runtime: Pick<CallRuntime, 'llm' | 'llmTimeouts'>, failFast: boolean): Llm {
  if (choice.kind === 'platform') return runtime.llm;
  const create = descriptorOf(choice.provider)?.llm?.create;
  if (!create) throw new Error(`${choice.provider} has no LLM`);
  return create({ ...choice.access, ...runtime.llmTimeouts, provider: choice.provider, failFast });
}

/**
 * The LLM a call's session asks, from its plan: the platform's shared client when the strategy
 * names none, else a client of the call's own, reached with the organization's key, which the
 * session closes when the call ends.
 */
export function callLlm(runtime: Pick<CallRuntime, 'llm' | 'llmTimeouts'>, plan: LlmPlan | undefined): Llm {
  const primary = plan?.choices[0];
  if (!primary) return runtime.llm;
  return clientOf(primary, runtime, false);
}
