import { Type, type Static } from 'typebox';
import { DateTime, Name, Uuid } from '../../http/schemas.ts';

export const HOOK_TYPES = ['transcript_ready', 'call_started', 'call_ended', 'task_status_changed'] as const;
export const LIMITS = { extensions: 50, hooks: 20, systemPrompt: 100_000, greeting: 10_000 } as const;

const NullableId = Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'An existing item id updates it; null or absent creates one' }));
const ExtensionType = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z][a-z0-9_]*$', examples: ['tool_webhook'] });

export const Extension = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    type: Type.String(),
    parameters: Type.Record(Type.String(), Type.Unknown(), { description: 'Type-specific; tool_webhook header values read as ********' }),
  },
  { title: 'LlmExtension' },
);

export const ExtensionWrite = Type.Object(
  {
    id: NullableId,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    type: ExtensionType,
    parameters: Type.Record(Type.String(), Type.Unknown()),
  },
  {
    additionalProperties: false,
    title: 'AssistantUpdateLlmExtension',
    examples: [{
      type: 'tool_webhook',
      parameters: {
        name: 'lookup_order',
        serverUrl: 'https://tools.example.com/orders',
        schema: JSON.stringify({
          name: 'lookup_order',
          description: 'Find an order by its number',
          parameters: { type: 'object', properties: { orderNumber: { type: 'string', description: 'The order number' } }, required: ['orderNumber'] },
        }),
        headers: { Authorization: 'Bearer your-webhook-token' },
        timeoutSeconds: 10,
      },
    }],
  },
);
export type ExtensionWrite = Static<typeof ExtensionWrite>;

const HookParameters = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL that receives the signed event' }),
    secret: Type.String({ minLength: 1, maxLength: 512, description: 'Signing secret (Standard Webhooks); write-only, reads as ********' }),
  },
  { additionalProperties: false },
);

export const CallEventHook = Type.Object(
  { id: Uuid, type: Type.String(), parameters: Type.Record(Type.String(), Type.String()) },
  { title: 'CallEventHook' },
);

export const CallEventHookWrite = Type.Object(
  { id: NullableId, type: Type.String({ enum: [...HOOK_TYPES] }), parameters: HookParameters },
  { additionalProperties: false, title: 'AssistantUpdateCallEventHook' },
);
export type CallEventHookWrite = Static<typeof CallEventHookWrite>;

export const Assistant = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    systemPrompt: Type.Union([Type.String(), Type.Null()]),
    systemPromptGreeting: Type.Union([Type.String(), Type.Null()]),
    llmAudioContentGenerationStrategyId: Type.Union([Uuid, Type.Null()]),
    telephoneNumberId: Type.Union([Uuid, Type.Null()]),
    extensions: Type.Array(Extension),
    callEventHooks: Type.Array(CallEventHook),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Assistant' },
);
export type Assistant = Static<typeof Assistant>;

const prompt = Type.Union([Type.String({ maxLength: LIMITS.systemPrompt }), Type.Null()], { description: 'Main prompt; {{name}} placeholders are filled from userValues' });
const greeting = Type.Union([Type.String({ maxLength: LIMITS.greeting }), Type.Null()], { description: 'Spoken first' });
const strategyId = Type.Union([Uuid, Type.Null()], { description: 'An LLM generation strategy of the same organization' });
const numberId = Type.Union([Uuid, Type.Null()], { description: 'A SIP number of the same organization' });
const extensions = Type.Array(ExtensionWrite, { maxItems: LIMITS.extensions });
const hooks = Type.Array(CallEventHookWrite, { maxItems: LIMITS.hooks });

export const AssistantCreate = Type.Object(
  {
    name: Name,
    systemPrompt: Type.Optional(prompt),
    systemPromptGreeting: Type.Optional(greeting),
    llmAudioContentGenerationStrategyId: Type.Optional(strategyId),
    telephoneNumberId: Type.Optional(numberId),
    extensions: Type.Optional(extensions),
    callEventHooks: Type.Optional(hooks),
  },
  {
    additionalProperties: false,
    title: 'AssistantCreate',
    examples: [{
      name: 'Front desk',
      systemPrompt: 'You are the front desk of {{company}}. Be brief and friendly.',
      systemPromptGreeting: 'Hello {{firstName}}, thanks for calling {{company}}!',
      llmAudioContentGenerationStrategyId: '0b6f1c1e-7a55-4f0e-9a34-2f1e4c3b9d10',
      extensions: [{ type: 'tool_webhook', parameters: { name: 'lookup_order', serverUrl: 'https://tools.example.com/orders', schema: '{"name":"lookup_order","description":"Find an order","parameters":{"type":"object","properties":{"orderNumber":{"type":"string"}},"required":["orderNumber"]}}', headers: { Authorization: 'Bearer your-webhook-token' } } }],
      callEventHooks: [{ type: 'transcript_ready', parameters: { url: 'https://hooks.example.com/parley', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } }],
    }],
  },
);
export type AssistantCreate = Static<typeof AssistantCreate>;

/** PUT: the fields the interface marks required must be present (null allowed where the resource may lack one). */
export const AssistantUpdate = Type.Object(
  {
    name: Name,
    systemPrompt: prompt,
    systemPromptGreeting: greeting,
    llmAudioContentGenerationStrategyId: strategyId,
    telephoneNumberId: Type.Optional(numberId),
    extensions,
    callEventHooks: hooks,
  },
  { additionalProperties: false, title: 'AssistantUpdate' },
);
export type AssistantUpdate = Static<typeof AssistantUpdate>;
