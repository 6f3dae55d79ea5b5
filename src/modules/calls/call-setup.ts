import type { Kysely, Selectable } from 'kysely';
import type { CallSetup } from '../../calls/record.ts';
import { fillPlaceholders } from '../../calls/template.ts';
import { controlToolsOf } from '../../calls/control-tools.ts';
import { toolWebhooksOf } from '../../calls/tools.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import type { Database } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import type { Kind } from '../assistants/assistants.repository.ts';
import { LIMITS } from '../assistants/assistants.schemas.ts';
import type { StoredExtension } from '../assistants/items.ts';
import { findAssistantAt } from '../assistants/versions.repository.ts';
import { findStrategy } from '../strategies/strategies.repository.ts';
import type { Strategy } from '../strategies/strategies.schemas.ts';
import type { CallTable } from './calls.table.ts';
import { voicePlanFor, type ResolveAccess } from './voice-plan.ts';

/**
 * What a connecting call runs with: the assistant at the version the call keeps (prompt and greeting filled
 * from the call's user values, within their limits), its strategy's model and temperature, and
 * its tool webhooks and call-control tools, and for a voice call how it speaks and listens. Null when the assistant is gone. Throws TemplateTooLongError when the
 * values no longer fit (a call recorded before versions existed runs the assistant as it is now).
 */
export async function loadCallSetup(
  db: Kysely<Database>, box: SecretBox, defaultModel: string, call: Selectable<CallTable>, resolve: ResolveAccess,
): Promise<CallSetup | null> {
  const source = await findAssistantAt(db, call.kind as Kind, call.organization_id, call.assistant_id, call.assistant_version);
  if (!source) return null;
  const strategy = source.strategy_id ? await findStrategy(db, call.organization_id, source.strategy_id) : undefined;
  const parameters = strategy ? readJson<Strategy['parameters']>(strategy.parameters) : {};
  const audio = call.audio ? readJson<{ encoding: string; sampleRate: number }>(call.audio) : null;
  const values = readJson<Record<string, unknown>>(call.user_values);
  const extensions = readJson<StoredExtension[]>(source.extensions);
  const tools = toolWebhooksOf(extensions, box);
  const prompt = source.system_prompt ? fillPlaceholders(source.system_prompt, values, LIMITS.systemPrompt) : null;
  const greeting = source.system_prompt_greeting ? fillPlaceholders(source.system_prompt_greeting, values, LIMITS.greeting) : null;
  return {
    callId: call.id,
    traceId: call.trace_id,
    systemPrompt: prompt?.text ?? null,
    greeting: greeting?.text ?? null,
    unfilled: [...new Set([...(prompt?.unfilled ?? []), ...(greeting?.unfilled ?? [])])],
    settings: { model: parameters.model ?? defaultModel, temperature: parameters.temperature },
    tools,
    controls: controlToolsOf(extensions, new Set(tools.map((t) => t.name))),
    voice: audio ? await voicePlanFor(strategy ? { type: strategy.type, parameters } : null, audio, call.organization_id, resolve) : null,
  };
}
