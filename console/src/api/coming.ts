/**
 * HAND-WRITTEN TYPES FOR API ROUTES THAT ARE NOT IN THE SERVICE YET.
 *
 * These routes are being built on main. Until they land they are not in /openapi.json, so the
 * generated types cannot describe them; the pages that use them ask the served OpenAPI
 * document whether a route exists first (see useApiHas) and say so when it does not.
 * Once the routes land: delete this file, use the generated types, and call them through
 * the typed client like every other route.
 *
 *   GET {org}/analytics/overview?from&to              -> Overview page
 *   GET {org}/agents/{agentId}/tasks/{taskId}/attempts -> task attempts on the agent's tasks page
 *   GET {org}/webhook-deliveries?callId=<uuid>        -> deliveries on the call page
 *   Call records' `turns`                             -> turn latencies on the call page
 */
import { ApiError } from './client';
import type { Scope } from './types';

export interface AnalyticsOverview {
  callsPerDay: { day: string; completed: number; abandoned: number; failed: number }[];
  turnLatency: { turns: number; p50Ms: number | null; p95Ms: number | null };
  tools: { invocations: number; errors: number; errorRate: number };
  tasks: { pending: number; scheduled: number; inProgress: number; completed: number; failed: number; cancelled: number };
}

export type AttemptOutcome = 'completed' | 'no_answer' | 'busy' | 'declined' | 'invalid_number' | 'failed' | 'lease_expired';

export interface TaskAttempt {
  attempt: number;
  startedAt: string;
  endedAt: string | null;
  outcome: AttemptOutcome | null;
  error: string | null;
  sipCode: number | null;
  callId: string | null;
}

export interface CallTurn {
  index: number;
  at: string;
  latencyMs: number;
}

/** The route templates as the OpenAPI document will list them, to ask whether they exist. */
export const COMING_ROUTES = {
  analytics: '/api/v1/vendors/{vendorId}/organizations/{organizationId}/analytics/overview',
  attempts: '/api/v1/vendors/{vendorId}/organizations/{organizationId}/agents/{agentId}/tasks/{taskId}/attempts',
} as const;

const org = (s: Scope) => `/api/v1/vendors/${s.vendorId}/organizations/${s.organizationId}`;

async function getJson<T>(token: string, url: string): Promise<T> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { data: T; message?: string; error?: { code: string; details: { path: string; message: string }[] } };
  if (!response.ok) throw new ApiError(response.status, body.message ?? `HTTP ${response.status}`, body.error?.code ?? 'UNKNOWN', body.error?.details ?? []);
  return body.data;
}

export function fetchOverview(token: string, scope: Scope, from: string, to: string): Promise<AnalyticsOverview> {
  return getJson(token, `${org(scope)}/analytics/overview?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
}

export function fetchAttempts(token: string, scope: Scope, agentId: string, taskId: string): Promise<TaskAttempt[]> {
  return getJson(token, `${org(scope)}/agents/${agentId}/tasks/${taskId}/attempts?size=100`);
}

/** The call's deliveries: only when the list route takes `callId` (the document lists its query parameters). */
export function fetchCallDeliveries<T>(token: string, scope: Scope, callId: string): Promise<T[]> {
  return getJson(token, `${org(scope)}/webhook-deliveries?callId=${encodeURIComponent(callId)}&size=100`);
}
