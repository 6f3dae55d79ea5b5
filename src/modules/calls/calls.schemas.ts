import { Type, type Static, type TSchema } from 'typebox';
import { DateTime, Uuid } from '../../http/schemas.ts';

export const CALL_STATUSES = ['ringing', 'active', 'ended'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export const OUTCOMES = ['completed', 'abandoned', 'failed'] as const;
const TOOL_OUTCOMES = ['ok', 'http_error', 'timeout', 'refused', 'too_large', 'unreachable', 'invalid_arguments', 'unknown_tool', 'aborted'] as const;
const END_REASONS = ['client_ended', 'client_disconnected', 'idle_timeout', 'max_duration', 'error', 'server_shutdown', 'not_connected'] as const;

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const CallStart = Type.Object(
  {
    userValues: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
      maxProperties: 100,
      description: 'Fill {{name}} placeholders in the prompt and greeting; values that are not strings are written as JSON',
    })),
  },
  { additionalProperties: false, title: 'CallStart', examples: [{ userValues: { firstName: 'Ada', orderCount: 3 } }] },
);
export type CallStart = Static<typeof CallStart>;

export const CallStarted = Type.Object(
  {
    id: Uuid,
    websocketUrl: Type.String({ description: 'Connect within 60 s; the token in it works once' }),
    expiresAt: DateTime,
  },
  { title: 'CallStarted' },
);

const Transport = Type.Object(
  { type: Type.String({ enum: ['websocket', 'sip'] }), calledNumber: Type.Optional(Type.String()), callingNumber: Type.Optional(Type.String()) },
  { title: 'CallTransport' },
);

const TranscriptEntry = Type.Object({ role: Type.String({ enum: ['assistant', 'user'] }), text: Type.String(), at: DateTime });

const ToolInvocation = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    arguments: Type.Unknown({ description: 'The arguments the LLM chose; their raw text when they were not a JSON object' }),
    ok: Type.Boolean(),
    statusCode: Nullable(Type.Integer()),
    latencyMs: Type.Integer(),
    outcome: Type.String({ enum: [...TOOL_OUTCOMES] }),
    at: DateTime,
  },
  { title: 'ToolInvocation' },
);

export const Conclusion = Type.Object(
  { id: Uuid, outcome: Type.String({ enum: [...OUTCOMES] }), summary: Nullable(Type.String()), createdAt: DateTime },
  { title: 'CallConclusion' },
);

export const Call = Type.Object(
  {
    id: Uuid,
    kind: Type.String({ enum: ['assistant', 'agent'] }),
    assistantId: Nullable(Uuid),
    agentId: Nullable(Uuid),
    status: Type.String({ enum: [...CALL_STATUSES] }),
    transport: Transport,
    startedAt: Nullable(DateTime),
    endedAt: Nullable(DateTime),
    endReason: Nullable(Type.String({ enum: [...END_REASONS] })),
    transcript: Type.Array(TranscriptEntry),
    toolInvocations: Type.Array(ToolInvocation),
    conclusionId: Nullable(Uuid),
    conclusion: Nullable(Conclusion),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Call' },
);
export type Call = Static<typeof Call>;

export const CallParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, callId: Uuid });
