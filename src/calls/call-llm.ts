import { FallbackLlm, type FallbackContext, type LlmCandidate } from './fallbacks/llm.ts';
import type { Llm } from './llm.ts';
import type { LlmChoice, LlmPlan } from './llm-plan.ts';
import { descriptorOf } from './providers/registry.ts';
import type { CallRuntime } from './runtime.ts';

type RuntimeParts = Pick<CallRuntime, 'llm' | 'llmTimeouts' | 'failFastPlatformLlm'>;

/** The client of one choice: the platform's (shared, or its own fail-fast one before a fallback), or one of the call's own for a provider of the registry. */
function candidateOf(choice: LlmChoice, runtime: RuntimeParts, failFast: boolean): LlmCandidate {
  if (choice.kind === 'platform') {
    const { llm, own } = failFast ? runtime.failFastPlatformLlm() : { llm: runtime.llm, own: false };
    return { provider: choice.provider, model: choice.model, llm, own };
  }
  const create = descriptorOf(choice.provider)?.llm?.create;
  if (!create) throw new Error(`${choice.provider} has no LLM`);
  const llm = create({ ...choice.access, ...runtime.llmTimeouts, provider: choice.provider, failFast });
  return { provider: choice.provider, model: choice.model, llm, own: true };
}

/**
 * The LLM a call's session asks, from its plan: its primary and fallbacks in one Llm (a client
 * of the call's own for an organization's provider, the platform's shared one when the strategy
 * names none), which keeps the call's ledger of who answered each turn. Close it with the call.
 */
export function callLlm(runtime: RuntimeParts, plan: LlmPlan | undefined, context: FallbackContext): Llm {
  if (!plan) return new FallbackLlm([{ provider: 'openai', llm: runtime.llm, own: false }], context);
  const candidates = plan.choices.map((choice, i) => candidateOf(choice, runtime, i < plan.choices.length - 1));
  return new FallbackLlm(candidates, context);
}
