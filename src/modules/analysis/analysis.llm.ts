import type { CallFailure } from '../../calls/failure.ts';
import { FallbackLlm, type LlmCandidate } from '../../calls/fallbacks/llm.ts';
import { ProviderHealth } from '../../calls/fallbacks/health.ts';
import { ProviderLedger } from '../../calls/fallbacks/ledger.ts';
import type { Llm, LlmSettings } from '../../calls/llm.ts';
import { isLlmPlan, llmPlanFor, type LlmChoice } from '../../calls/llm-plan.ts';
import { platformLlm as platformProvider, type ResolveAccess } from '../../calls/providers/access.ts';
import { descriptorOf } from '../../calls/providers/registry.ts';
import type { StrategyParameters } from '../../calls/strategy-parameters.ts';
import type { Context } from '../../context.ts';
import { readJson } from '../../db/values.ts';
import { findStrategy } from '../strategies/strategies.repository.ts';

/** A call's LLM for one analysis: the client (its primary and fallbacks), the model and settings; close it when done. */
export interface CallLlm {
  llm: Llm;
  settings: LlmSettings;
  close(): Promise<void>;
}

/**
 * The one answer to "which LLM does this call's organization and strategy use": the plan the call
 * itself ran with (llmPlanFor: the strategy's `llm` with the organization's credential, then its
 * `fallbacks.llm`; the platform's LLM only when the strategy names none), or the failure that
 * would have ended the call at start (no key for the provider it names, a refused base URL).
 */
export type LlmForCall = (call: { organizationId: string; strategyId: string | null }) => Promise<CallLlm | CallFailure>;

export const isCallLlm = (value: CallLlm | CallFailure): value is CallLlm => 'llm' in value;

/** `given` stands for the platform's LLM (tests); by default it is built from the config, as the engine builds it. */
export function organizationLlm(ctx: Pick<Context, 'config' | 'db' | 'clock' | 'log'>, resolve: ResolveAccess, given?: Llm): LlmForCall {
  const { config } = ctx;
  const platform = platformProvider(config);
  const shared = given ?? platform.provider.llm.create({
    baseUrl: platform.baseUrl, apiKey: platform.apiKey, firstTokenMs: config.llmFirstTokenMs, tokenGapMs: config.llmTokenGapMs, failFast: false,
  });
  // The analyses' own memory of failing providers: a provider that failed one analysis is tried
  // last by the organization's next ones for the cool-down, as the calls do.
  const health = new ProviderHealth(ctx.clock);
  const timeouts = { firstTokenMs: config.llmFirstTokenMs, tokenGapMs: config.llmTokenGapMs };

  const candidateOf = (choice: LlmChoice, failFast: boolean): LlmCandidate => {
    // The platform's client is shared by every analysis (and retries on its own): nothing to close.
    if (choice.kind === 'platform') return { provider: choice.provider, model: choice.model, llm: shared, own: false };
    const create = descriptorOf(choice.provider)?.llm?.create;
    if (!create) throw new Error(`${choice.provider} has no LLM`);
    return { provider: choice.provider, model: choice.model, llm: create({ ...choice.access, ...timeouts, provider: choice.provider, failFast }), own: true };
  };

  return async ({ organizationId, strategyId }) => {
    const strategy = strategyId ? await findStrategy(ctx.db.kysely, organizationId, strategyId) : undefined;
    const parameters = strategy ? readJson<StrategyParameters>(strategy.parameters) : {};
    const plan = await llmPlanFor(parameters, organizationId, resolve, config.llmDefaultModel);
    if (!isLlmPlan(plan)) return plan;
    const last = plan.choices.length - 1;
    const llm = new FallbackLlm(plan.choices.map((choice, i) => candidateOf(choice, i < last)), {
      health, ledger: new ProviderLedger(), owner: organizationId, log: ctx.log,
    });
    // An analysis should read the same call the same way twice: no sampling temperature.
    return { llm, settings: { model: plan.choices[0].model, temperature: 0 }, close: () => llm.close() };
  };
}
