import type { Json, Timestamp } from '../../db/schema.ts';

/**
 * The webhook outbox: one row per (event, hook). The row is the job (graphile-worker style):
 * claimed with a lease, its failures kept on it, retried at next_attempt_at. Its id is the
 * Standard Webhooks `webhook-id`, the same on every attempt.
 */
export interface WebhookDeliveryTable {
  id: string;
  organization_id: string;
  hook_id: string;
  source_kind: string;
  source_id: string;
  event_type: string;
  payload: Json;
  /** pending | delivered | failed */
  status: string;
  attempts: number;
  /** Null while an attempt is in flight (leased) and once the delivery is settled. */
  next_attempt_at: Timestamp | null;
  /** Failed attempts are retried until this moment has passed (24 h after creation or redelivery). */
  retry_until: Timestamp;
  lease_owner: string | null;
  lease_expires_at: Timestamp | null;
  last_status_code: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  delivered_at: Timestamp | null;
  /** Origin of the hook URL when the event was queued: the unit of fairness and circuit breaking. */
  endpoint: string;
  /** The call the event is about, when it is about one. */
  call_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookDeliveryAttemptTable {
  delivery_id: string;
  attempt: number;
  at: Timestamp;
  status_code: number | null;
  latency_ms: number | null;
  error: string | null;
}

/** A webhook endpoint (URL origin) that keeps failing: its deliveries wait while the circuit is open. */
export interface WebhookEndpointTable {
  endpoint: string;
  failures: number;
  open_until: Timestamp | null;
  updated_at: Timestamp;
}

declare module '../../db/schema.ts' {
  interface Database {
    webhook_deliveries: WebhookDeliveryTable;
    webhook_delivery_attempts: WebhookDeliveryAttemptTable;
    webhook_endpoints: WebhookEndpointTable;
  }
}
