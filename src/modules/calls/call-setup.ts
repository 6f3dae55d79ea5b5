import type { CallSetup } from '../../calls/record.ts';
import type { CallSetupSource, LiveCall } from '../../calls/store.ts';
import type { StrategyParameters } from '../../calls/strategy-parameters.ts';
import { fillPlaceholders } from '../../calls/template.ts';
import { controlToolsOf } from '../../calls/control-tools.ts';
import { toolWebhooksOf } from '../../calls/tools.ts';
import { platformLlm, type ResolveAccess } from '../../calls/providers/access.ts';
import { isLlmPlan, llmPlanFor } from '../../calls/llm-plan.ts';
import { voicePlanFor } from '../../calls/voice/plan-for.ts';
import { voicemailDetectionOf } from '../../calls/voicemail-detection.ts';
import type { Context } from '../../context.ts';
import { readJson } from '../../db/values.ts';
import { LIMITS } from '../assistants/assistants.schemas.ts';
import type { StoredExtension } from '../assistants/items.ts';
import { findAssistantAt } from '../assistants/versions.repository.ts';
import { findStrategy } from '../strategies/strategies.repository.ts';

/**
 * What a connecting call runs with: the assistant at the version the call keeps (prompt and
 * greeting filled from the call's user values, within their limits; a call recorded before
 * versions existed runs the assistant as it is now), its strategy's model and temperature, and
 * its tool webhooks and call-control tools, and for a voice call how it speaks and listens. Null
 * when the assistant is gone. Throws TemplateTooLongError when the assistant changed since the
 * start so that the values no longer fit.
 */
export function callSetups(ctx: Pick<Context, 'db' | 'secrets' | 'config'>, resolve: ResolveAccess): CallSetupSource {
  const db = ctx.db.kysely;
  return {
    async load(call: LiveCall): Promise<CallSetup | null> {
      const source = await findAssistantAt(db, call.kind, call.organizationId, call.sourceId, call.sourceVersion);
      if (!source) return null;
      const strategy = source.strategy_id ? await findStrategy(db, call.organizationId, source.strategy_id) : undefined;
      const parameters = strategy ? readJson<StrategyParameters>(strategy.parameters) : {};
      const values = call.userValues;
      const extensions = readJson<StoredExtension[]>(source.extensions);
      const tools = toolWebhooksOf(extensions, ctx.secrets);
      const prompt = source.system_prompt ? fillPlaceholders(source.system_prompt, values, LIMITS.systemPrompt) : null;
      const greeting = source.system_prompt_greeting ? fillPlaceholders(source.system_prompt_greeting, values, LIMITS.greeting) : null;
      const voice = call.audio ? await voicePlanFor(strategy ? { type: strategy.type, parameters } : null, call.audio, call.organizationId, resolve) : null;
      // A realtime model holds a speech_to_speech call's conversation: the strategy's LLM plays no part in it.
      const planned = voice?.kind === 'realtime' ? null : await llmPlanFor(parameters, call.organizationId, resolve, ctx.config.llmDefaultModel, platformLlm(ctx.config).provider.name);
      const llm = planned && isLlmPlan(planned) ? planned : null;
      const failure = planned && !isLlmPlan(planned) ? planned : null;
      return {
        callId: call.id,
        traceId: call.traceId,
        organizationId: call.organizationId,
        systemPrompt: prompt?.text ?? null,
        greeting: greeting?.text ?? null,
        unfilled: [...new Set([...(prompt?.unfilled ?? []), ...(greeting?.unfilled ?? [])])],
        settings: { model: llm?.choices[0].model ?? parameters.model ?? ctx.config.llmDefaultModel, temperature: parameters.temperature },
        tools,
        controls: controlToolsOf(extensions, new Set(tools.map((t) => t.name))),
        recording: readJson<{ enabled?: boolean } | null>(source.recording)?.enabled === true,
        // A call that cannot run opens no voice provider: its voice fails with the same reason.
        voice: voice && failure ? { kind: 'unusable', audio: voice.audio, failure } : voice,
        ...(llm ? { llm } : {}),
        failure,
        voicemailDetection: call.kind === 'agent' ? voicemailDetectionOf(extensions, source.name, values) : null,
        ...(call.transport.type === 'websocket' && call.transport.clientTools ? { clientTools: true } : {}),
      };
    },
  };
}
