import type { CallFailure } from './failure.ts';
import { accessFor, isFailure, type ProviderAccess, type ResolveAccess } from './providers/access.ts';
import { descriptorOf, type ProviderName } from './providers/registry.ts';
import type { StrategyParameters } from './strategy-parameters.ts';

/**
 * One LLM a call may use. `platform` is the platform's own (OPENAI_BASE_URL and OPENAI_API_KEY,
 * one client the whole process shares), what a strategy naming no `llm` gets, as before providers
 * were per organization; `provider` is one of the registry's, reached with the organization's
 * key (or the platform's, for a provider that has a platform variable), in a client of the call's own.
 */
export type LlmChoice =
  | { kind: 'platform'; provider: ProviderName; model: string }
  | { kind: 'provider'; provider: ProviderName; model: string; access: ProviderAccess };

/** The call's LLMs in the order they are tried: the primary, then its fallbacks. */
export interface LlmPlan {
  choices: [LlmChoice, ...LlmChoice[]];
}

/**
 * The LLMs of a call from its strategy: `llm` names the primary (else the platform's, with
 * `model` or the service default), `fallbacks.llm` the ones after it. A provider the
 * organization has no key for makes the plan a failure, which ends the call at start naming
 * the provider (`llm:anthropic`), a fallback's as much as the primary's: a fallback that could
 * never serve is a mistake to show at once, not when the primary fails. `platformProvider` is
 * how records name the platform's LLM (`openai`, or `demo` when none is configured).
 */
export async function llmPlanFor(
  parameters: StrategyParameters, organizationId: string, resolve: ResolveAccess, defaultModel: string, platformProvider: ProviderName = 'openai',
): Promise<LlmPlan | CallFailure> {
  const named = [...(parameters.llm ? [parameters.llm] : []), ...(parameters.fallbacks?.llm ?? [])];
  const choices: LlmChoice[] = parameters.llm ? [] : [{ kind: 'platform', provider: platformProvider, model: parameters.model ?? defaultModel }];
  for (const { provider, model } of named) {
    const name = provider as ProviderName;
    // A provider that takes no credential (the built-in demo model) is reached nowhere.
    const access = descriptorOf(name)?.credential === null ? { apiKey: null, baseUrl: '' } : await accessFor(resolve, organizationId, name, `llm:${name}`);
    if (isFailure(access)) return access;
    choices.push({ kind: 'provider', provider: name, model, access });
  }
  return { choices: choices as LlmPlan['choices'] };
}

export const isLlmPlan = (value: LlmPlan | CallFailure): value is LlmPlan => 'choices' in value;
