import type { Kysely, Selectable, Transaction } from 'kysely';
import { bumpCounter } from '../../db/counters.ts';
import type { Database } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import type { Kind } from '../assistants/assistants.repository.ts';
import type { Call, CallStatus } from './calls.schemas.ts';
import type { CallTable } from './calls.table.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * List totals: per organization and per assistant/agent within it, each overall and per status.
 * A status change moves the two status counters in the same transaction as the change itself.
 */
export const callCounter = (organizationId: string, source: { kind: Kind; sourceId: string } | null, status?: CallStatus) =>
  ['calls', organizationId, ...(source ? [source.kind, source.sourceId] : []), ...(status ? [status] : [])].join(':');

export interface CallRef {
  organizationId: string;
  kind: Kind;
  sourceId: string;
}

export async function countNewCall(trx: Transaction<Database>, ref: CallRef, status: CallStatus): Promise<void> {
  for (const source of [null, ref]) {
    await bumpCounter(trx, callCounter(ref.organizationId, source), 1);
    await bumpCounter(trx, callCounter(ref.organizationId, source, status), 1);
  }
}

export async function countStatusChange(trx: Transaction<Database>, ref: CallRef, from: CallStatus, to: CallStatus): Promise<void> {
  for (const source of [null, ref]) {
    await bumpCounter(trx, callCounter(ref.organizationId, source, from), -1);
    await bumpCounter(trx, callCounter(ref.organizationId, source, to), 1);
  }
}

export const refOf = (row: Pick<Selectable<CallTable>, 'organization_id' | 'kind' | 'assistant_id'>): CallRef => ({
  organizationId: row.organization_id, kind: row.kind as Kind, sourceId: row.assistant_id,
});

/** Calls with their conclusion's outcome and summary, for the read shape. */
export function callsWithConclusion(db: Executor, organizationId: string) {
  return db
    .selectFrom('calls')
    .leftJoin('conclusions', 'conclusions.id', 'calls.conclusion_id')
    .selectAll('calls')
    .select(['conclusions.outcome as conclusion_outcome', 'conclusions.summary as conclusion_summary', 'conclusions.created_at as conclusion_created_at'])
    .where('calls.organization_id', '=', organizationId);
}

type CallRow = Selectable<CallTable> & { conclusion_outcome: string | null; conclusion_summary: string | null; conclusion_created_at: string | null };

export function toCall(row: CallRow): Call {
  const conclusion = row.conclusion_id && row.conclusion_outcome && row.conclusion_created_at
    ? { id: row.conclusion_id, outcome: row.conclusion_outcome, summary: row.conclusion_summary, createdAt: row.conclusion_created_at }
    : null;
  return {
    id: row.id,
    kind: row.kind,
    assistantId: row.kind === 'assistant' ? row.assistant_id : null,
    agentId: row.kind === 'agent' ? row.assistant_id : null,
    status: row.status,
    transport: readJson<Call['transport']>(row.transport),
    startedAt: row.started_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    transcript: readJson<Call['transcript']>(row.transcript),
    toolInvocations: readJson<Call['toolInvocations']>(row.tool_invocations),
    conclusionId: row.conclusion_id,
    conclusion,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
