import type { Llm, LlmSettings } from '../../calls/llm.ts';
import { platformLlm as platformProvider } from '../../calls/providers/access.ts';
import type { StrategyParameters } from '../../calls/strategy-parameters.ts';
import type { Context } from '../../context.ts';
import { readJson } from '../../db/values.ts';
import { findStrategy } from '../strategies/strategies.repository.ts';

/** A call's LLM: the client, and the model (with its settings) its strategy names. */
export interface CallLlm {
  llm: Llm;
  settings: LlmSettings;
}

/**
 * The one answer to "which LLM does this call's organization and strategy use": the analysis
 * asks it, and so will anything else that talks to an organization's LLM after a call. Today
 * every organization's LLM is the platform's OPENAI_* endpoint, with the strategy's model (or
 * PARLEY_LLM_DEFAULT_MODEL); per-organization providers plug in here.
 */
export type LlmForCall = (call: { organizationId: string; strategyId: string | null }) => Promise<CallLlm>;

export function platformLlm(ctx: Pick<Context, 'config' | 'db'>, given?: Llm): LlmForCall {
  const { config } = ctx;
  // The platform's LLM, as the engine builds it (src/engine.ts). A strategy's parameters.llm (the
  // organization's own provider and its fallbacks) is not followed here yet: this is the one
  // place to resolve it from the call's organization and strategy.
  const platform = platformProvider(config);
  const llm = given ?? platform.provider.llm.create({
    baseUrl: platform.baseUrl, apiKey: platform.apiKey, firstTokenMs: config.llmFirstTokenMs, tokenGapMs: config.llmTokenGapMs, failFast: false,
  });
  return async ({ organizationId, strategyId }) => {
    const strategy = strategyId ? await findStrategy(ctx.db.kysely, organizationId, strategyId) : undefined;
    const parameters = strategy ? readJson<StrategyParameters>(strategy.parameters) : {};
    // An analysis should read the same call the same way twice: no sampling temperature.
    return { llm, settings: { model: parameters.model ?? config.llmDefaultModel, temperature: 0 } };
  };
}
