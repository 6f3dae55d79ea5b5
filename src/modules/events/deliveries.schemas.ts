import { Type, type Static } from 'typebox';
import { DateTime, Uuid } from '../../http/schemas.ts';
import { HOOK_TYPES } from '../assistants/assistants.schemas.ts';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A delivery id is the `webhook-id` the receiver saw: `msg_` and a UUID. */
export const WebhookId = Type.String({
  pattern: '^msg_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  description: 'The webhook-id header of every attempt of this delivery',
  examples: ['msg_0b6f1c1e-7a55-4f0e-9a34-2f1e4c3b9d10'],
});

const NullableInt = Type.Union([Type.Integer(), Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const WebhookDeliveryAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    at: DateTime,
    statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no HTTP answer came (timeout, refused, …)' }),
    latencyMs: NullableInt,
    error: Type.Union([Type.String(), Type.Null()], { description: 'null for a 2xx' }),
  },
  { title: 'WebhookDeliveryAttempt' },
);
export type WebhookDeliveryAttempt = Static<typeof WebhookDeliveryAttempt>;

const deliveryFields = {
  id: WebhookId,
  hookId: Uuid,
  sourceKind: Type.String({ enum: ['assistant', 'agent'] }),
  sourceId: Uuid,
  eventType: Type.String({ enum: [...HOOK_TYPES] }),
  payload: Type.Record(Type.String(), Type.Unknown(), { description: 'The `data` of the event body' }),
  callId: Type.Union([Uuid, Type.Null()], { description: 'The call the event is about, when it is about one' }),
  status: Type.String({ enum: [...DELIVERY_STATUSES] }),
  inFlight: Type.Boolean({ description: 'An attempt is being sent right now' }),
  attemptCount: Type.Integer({ minimum: 0 }),
  nextAttemptAt: Type.Union([DateTime, Type.Null()], { description: 'When the next attempt is due; null while one is in flight or once settled' }),
  retryUntil: Type.String({ format: 'date-time', description: 'Failed attempts are retried until this time has passed' }),
  lastStatusCode: NullableInt,
  lastError: NullableString,
  lastLatencyMs: NullableInt,
  deliveredAt: Type.Union([DateTime, Type.Null()], { description: 'The last time a 2xx answered it' }),
  createdAt: DateTime,
  updatedAt: DateTime,
};

export const WebhookDelivery = Type.Object(deliveryFields, { title: 'WebhookDelivery' });
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryDetail = Type.Object(
  { ...deliveryFields, attempts: Type.Array(WebhookDeliveryAttempt, { description: 'The latest 100 attempts, oldest first' }) },
  { title: 'WebhookDeliveryDetail' },
);

/** The filters of the delivery list. */
export const DeliveryFilters = {
  status: Type.Optional(Type.String({ enum: [...DELIVERY_STATUSES], description: 'Only deliveries in this status' })),
  hookId: Type.Optional(Type.String({ ...Uuid, description: 'Only deliveries of this call event hook' })),
  eventType: Type.Optional(Type.String({ enum: [...HOOK_TYPES], description: 'Only events of this type' })),
  callId: Type.Optional(Type.String({ ...Uuid, description: 'Only events about this call' })),
};

export const DeliveryParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, deliveryId: WebhookId });
