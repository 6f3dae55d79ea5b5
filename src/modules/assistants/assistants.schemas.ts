import { Type, type Static, type TSchema } from 'typebox';
import { GREETING_TIMINGS, MAX_MESSAGE_LENGTH, MAX_WAIT_SECONDS, VOICEMAIL_ACTIONS } from '../../calls/voicemail-detection.ts';
import { documentedAs } from '../../http/openapi-components.ts';
import { DateTime, Name, Uuid } from '../../http/schemas.ts';
import { AnalysisSetting, RecordingSetting } from './after-call.schemas.ts';

export const HOOK_TYPES = ['transcript_ready', 'call_started', 'call_ended', 'task_status_changed', 'recording_ready', 'call_analyzed'] as const;
export const EXTENSION_TYPES = ['tool_webhook', 'end_call', 'transfer_call', 'send_dtmf', 'voicemail_detection'] as const;
export type ExtensionType = (typeof EXTENSION_TYPES)[number];
export const LIMITS = { extensions: 50, hooks: 10, systemPrompt: 100_000, greeting: 10_000, toolHeaders: 32 } as const;

const NullableId = Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'An existing item id updates it; null or absent creates one' }));
const Description = Type.String({ minLength: 1, maxLength: 1000, description: 'Tells the LLM when to use it' });

export const ToolWebhookParameters = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'The tool name the LLM sees: 1-64 letters, digits, _ or -' }),
    serverUrl: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL that receives the POST' }),
    schema: Type.String({ maxLength: 64 * 1024, description: 'The tool specification as a JSON string: { name, description, parameters: { type: "object", properties, required } }' }),
    headers: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 8192 }), {
      maxProperties: LIMITS.toolHeaders, description: 'Static headers on every request; values are write-only (read as ********)',
    })),
    timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 60, description: 'Default 10' })),
    signingSecret: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'Signs each request (Standard Webhooks); write-only' })),
  },
  { additionalProperties: false, title: 'ToolWebhookParameters' },
);

export const EndCallParameters = Type.Object(
  {
    description: Type.Optional(Description),
    message: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Said before hanging up when the LLM gives no last sentence' })),
  },
  { additionalProperties: false, title: 'EndCallParameters' },
);

export const TransferCallParameters = Type.Object(
  {
    destination: Type.String({ pattern: '^(\\+[1-9][0-9]{6,14}|sips?:[^\\s]{3,250})$', description: 'E.164 number or sip: URI the call is transferred to' }),
    message: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Said before the transfer' })),
    description: Type.Optional(Description),
  },
  { additionalProperties: false, title: 'TransferCallParameters' },
);

export const SendDtmfParameters = Type.Object(
  { description: Type.Optional(Description) },
  { additionalProperties: false, title: 'SendDtmfParameters' },
);

export const VoicemailDetectionParameters = Type.Object(
  {
    action: Type.String({
      enum: [...VOICEMAIL_ACTIONS],
      description: 'What an agent task\'s call does when a voicemail box answers: hang_up at once, or leave_message after the beep (or, without one, once the greeting is over), then hang up',
    }),
    message: Type.Optional(Type.String({
      minLength: 1, maxLength: MAX_MESSAGE_LENGTH, pattern: '\\S',
      description: 'Said in the agent\'s voice after the beep (required with leave_message), and to a call-screening assistant after the agent\'s name; {{placeholders}} are filled from the task\'s userValues like the greeting',
    })),
    maxWaitSeconds: Type.Optional(Type.Integer({
      minimum: MAX_WAIT_SECONDS.min, maximum: MAX_WAIT_SECONDS.max,
      description: `Default ${MAX_WAIT_SECONDS.default}. The longest the greeting waits for a verdict (then the call goes on as with a person, answeredBy unknown), and the longest a message waits for the greeting to end, from the answer`,
    })),
    detectScreening: Type.Optional(Type.Boolean({ description: 'Default true. Tell call-screening assistants apart by their words (needs a speech-to-text) and answer them with the agent\'s name and the reason for the call' })),
    greeting: Type.Optional(Type.String({
      enum: [...GREETING_TIMINGS],
      description: 'Default at_answer: the greeting goes out at the answer, as without detection, while detection listens (the far end\'s audio reaches the conversation only once a person is judged), and is withdrawn at once if a machine answered. after_verdict: the greeting waits for the verdict',
    })),
    retryAfterMessage: Type.Optional(Type.Boolean({ description: 'Default false: a left message completes the task. true: the task is tried again (at most PARLEY_TASK_MAX_VOICEMAILS voicemails in all)' })),
  },
  { additionalProperties: false, title: 'VoicemailDetectionParameters' },
);

const PARAMETERS = {
  tool_webhook: ToolWebhookParameters, end_call: EndCallParameters, transfer_call: TransferCallParameters, send_dtmf: SendDtmfParameters,
  voicemail_detection: VoicemailDetectionParameters,
} as const;

/** `tool_webhook` → `ToolWebhook`: the component names of a type's schemas in /openapi.json. */
const pascal = (type: string) => type.split('_').map((word) => (word[0] ?? '').toUpperCase() + word.slice(1)).join('');

/**
 * A union told apart by `type` (the OpenAPI discriminator): validation reports only the mistakes
 * of the type that was named, and a generated client narrows on `type`. The read and the write
 * unions of extensions (and of hooks) share each type's `parameters` schema, so an item read
 * from a GET can be sent back in a PUT as it is.
 */
const byType = <T>(branches: TSchema[], title: string, extra: Record<string, unknown> = {}) =>
  Type.Unsafe<T>({ oneOf: branches, discriminator: { propertyName: 'type' }, title, ...extra });

const extensionRead = <T extends ExtensionType>(type: T) => Type.Object(
  { id: Uuid, name: Type.String(), type: Type.Literal(type), parameters: PARAMETERS[type] },
  { title: `${pascal(type)}Extension` },
);

const extensionWrite = <T extends ExtensionType>(type: T) => Type.Object(
  {
    id: NullableId,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    type: Type.Literal(type),
    parameters: PARAMETERS[type],
  },
  { additionalProperties: false, title: `${pascal(type)}ExtensionWrite` },
);

type ExtensionReadOf<T extends ExtensionType> = Static<ReturnType<typeof extensionRead<T>>>;
type ExtensionWriteOf<T extends ExtensionType> = Static<ReturnType<typeof extensionWrite<T>>>;
export type ExtensionRead = { [T in ExtensionType]: ExtensionReadOf<T> }[ExtensionType];
export type ExtensionWrite = { [T in ExtensionType]: ExtensionWriteOf<T> }[ExtensionType];

/**
 * An extension as read: masked secrets read as ********, every other value as it was written
 * (and validated by its type's schema then). Documented as the union; written out as any item.
 */
export const Extension = documentedAs(
  Type.Object({ id: Uuid, name: Type.String(), type: Type.String(), parameters: Type.Record(Type.String(), Type.Unknown()) }),
  byType<ExtensionRead>(EXTENSION_TYPES.map(extensionRead), 'LlmExtension'),
);

/** An extension in a create or update body. */
export const ExtensionWrite = byType<ExtensionWrite>(EXTENSION_TYPES.map(extensionWrite), 'AssistantUpdateLlmExtension', {
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
});

const HookParameters = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL that receives the signed event' }),
    secret: Type.String({ minLength: 1, maxLength: 512, description: 'Signing secret (Standard Webhooks); write-only, reads as ********' }),
  },
  { additionalProperties: false, title: 'CallEventHookParameters' },
);

export type HookType = (typeof HOOK_TYPES)[number];
const hookRead = <T extends HookType>(type: T) => Type.Object(
  { id: Uuid, type: Type.Literal(type), parameters: HookParameters },
  { title: `${pascal(type)}Hook` },
);
const hookWrite = <T extends HookType>(type: T) => Type.Object(
  { id: NullableId, type: Type.Literal(type), parameters: HookParameters },
  { additionalProperties: false, title: `${pascal(type)}HookWrite` },
);
export type CallEventHookRead = { [T in HookType]: Static<ReturnType<typeof hookRead<T>>> }[HookType];
export type CallEventHookWrite = { [T in HookType]: Static<ReturnType<typeof hookWrite<T>>> }[HookType];

export const CallEventHook = documentedAs(
  Type.Object({ id: Uuid, type: Type.String(), parameters: Type.Record(Type.String(), Type.String()) }),
  byType<CallEventHookRead>(HOOK_TYPES.map(hookRead), 'CallEventHook'),
);
export const CallEventHookWrite = byType<CallEventHookWrite>(HOOK_TYPES.map(hookWrite), 'AssistantUpdateCallEventHook');

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
    recording: RecordingSetting,
    analysis: Type.Union([AnalysisSetting, Type.Null()]),
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
const recording = Type.Union([RecordingSetting, Type.Null()], { description: 'Off when null or left out' });
const analysis = Type.Union([AnalysisSetting, Type.Null()], { description: 'No analysis when null' });

export const AssistantCreate = Type.Object(
  {
    name: Name,
    systemPrompt: Type.Optional(prompt),
    systemPromptGreeting: Type.Optional(greeting),
    llmAudioContentGenerationStrategyId: Type.Optional(strategyId),
    telephoneNumberId: Type.Optional(numberId),
    extensions: Type.Optional(extensions),
    callEventHooks: Type.Optional(hooks),
    recording: Type.Optional(recording),
    analysis: Type.Optional(analysis),
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
    // Optional, like telephoneNumberId: left out keeps what is set.
    recording: Type.Optional(recording),
    analysis: Type.Optional(analysis),
  },
  { additionalProperties: false, title: 'AssistantUpdate' },
);
export type AssistantUpdate = Static<typeof AssistantUpdate>;
