import type { Selectable, Transaction } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import type { Database, Executor } from '../../db/schema.ts';
import { fetchPage, type PageQuery } from '../../http/pagination.ts';
import { readBool, readJson } from '../../db/values.ts';
import type { CallLogEntry, ToolInvocation, TranscriptEntry } from '../../calls/record.ts';
import type { Kind } from '../assistants/assistants.repository.ts';
import type { Call, CallStatus, Conclusion } from './calls.schemas.ts';
import '../recordings/recordings.table.ts';
import type { CallTable, ConclusionTable } from './calls.table.ts';

/**
 * List totals: per organization and per assistant/agent within it, each overall and per status.
 * A status change moves the two status counters in the same transaction as the change itself.
 */
export const callCounter = (organizationId: string, source: { kind: Kind; sourceId: string } | null, status?: CallStatus) =>
  ['calls', organizationId, ...(source ? [source.kind, source.sourceId] : []), ...(status ? [status] : [])].join(':');

/** Ended calls whose analysis gave this pass_fail verdict, per organization and per assistant/agent. */
export const successCounter = (organizationId: string, source: { kind: Kind; sourceId: string } | null, success: boolean) =>
  `${callCounter(organizationId, source)}:success:${success}`;

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
    .leftJoin('call_recordings', 'call_recordings.call_id', 'calls.id')
    .selectAll('calls')
    .select([
      'conclusions.outcome as conclusion_outcome', 'conclusions.summary as conclusion_summary', 'conclusions.created_at as conclusion_created_at',
      'conclusions.data as conclusion_data', 'conclusions.data_error as conclusion_data_error', 'conclusions.success as conclusion_success',
      'conclusions.analyzed_at as conclusion_analyzed_at', 'conclusions.analysis_status as conclusion_analysis_status',
      'call_recordings.status as recording_status', 'call_recordings.duration_ms as recording_duration_ms', 'call_recordings.bytes as recording_bytes',
      'call_recordings.channels as recording_channels', 'call_recordings.sample_rate as recording_sample_rate',
    ])
    .where('calls.organization_id', '=', organizationId);
}

type CallRow = Selectable<CallTable> & {
  conclusion_outcome: string | null; conclusion_summary: string | null; conclusion_created_at: string | null;
  conclusion_data: unknown; conclusion_data_error: unknown; conclusion_success: unknown; conclusion_analyzed_at: string | null; conclusion_analysis_status: string | null;
  recording_status: string | null; recording_duration_ms: number | string | null; recording_bytes: number | string | null;
  recording_channels: number | null; recording_sample_rate: number | null;
};

export interface CallLog {
  transcript: TranscriptEntry[];
  toolInvocations: ToolInvocation[];
}

/** Appends a session's log entries after the call's last one. */
export async function appendEntries(trx: Transaction<Database>, callId: string, organizationId: string, entries: readonly CallLogEntry[]): Promise<void> {
  if (!entries.length) return;
  const last = await trx.selectFrom('call_entries').select((eb) => eb.fn.max('seq').as('seq')).where('call_id', '=', callId).executeTakeFirst();
  let seq = Number(last?.seq ?? 0);
  await trx.insertInto('call_entries').values(entries.map((item) => {
    seq++;
    if (item.kind === 'tool') {
      const { at, ...invocation } = item.invocation;
      return { call_id: callId, seq, organization_id: organizationId, kind: 'tool' as const, at, text: null, latency_ms: null, interrupted: null, detail: JSON.stringify(invocation), response_ms: null };
    }
    const { role, text, at, latencyMs, interrupted, latency, endpointing, startMs, endMs } = item.entry;
    const detail = { ...(latency ? { latency, endpointing } : {}), ...(startMs !== undefined ? { startMs, endMs } : {}) };
    return {
      call_id: callId, seq, organization_id: organizationId, kind: role, at, text,
      latency_ms: latencyMs ?? null, interrupted: interrupted === undefined ? null : interrupted ? 1 : 0,
      detail: Object.keys(detail).length ? JSON.stringify(detail) : null, response_ms: latency?.totalMs ?? null,
    };
  })).execute();
}

/** The logs of some calls, in order, from their appended entries. */
export async function loadLog(db: Executor, callIds: readonly string[]): Promise<Map<string, CallLog>> {
  const logs = new Map<string, CallLog>(callIds.map((id) => [id, { transcript: [], toolInvocations: [] }]));
  if (!callIds.length) return logs;
  const rows = await db.selectFrom('call_entries').selectAll().where('call_id', 'in', [...callIds]).orderBy('call_id').orderBy('seq').execute();
  for (const row of rows) {
    const log = logs.get(row.call_id);
    if (!log) continue;
    if (row.kind === 'tool') {
      log.toolInvocations.push({ ...readJson<Omit<ToolInvocation, 'at'>>(row.detail), at: row.at });
      continue;
    }
    const entry: TranscriptEntry = { role: row.kind, text: row.text ?? '', at: row.at };
    if (row.latency_ms !== null) entry.latencyMs = row.latency_ms;
    if (row.interrupted !== null) entry.interrupted = readBool(row.interrupted);
    if (row.detail !== null) Object.assign(entry, readJson<Pick<TranscriptEntry, 'latency' | 'endpointing' | 'startMs' | 'endMs'>>(row.detail));
    log.transcript.push(entry);
  }
  return logs;
}

type ConclusionRow = Pick<Selectable<ConclusionTable>, 'id' | 'call_id' | 'outcome' | 'summary' | 'data' | 'data_error' | 'success' | 'analyzed_at' | 'analysis_status' | 'created_at'>;

/** A conclusion's read shape (a retried analysis that is running again reads as pending). */
export function toConclusion(row: ConclusionRow): Conclusion {
  return {
    id: row.id, callId: row.call_id, outcome: row.outcome, summary: row.summary,
    data: row.data === null || row.data === undefined ? null : readJson(row.data),
    dataError: row.data_error === null || row.data_error === undefined ? null : readJson<Conclusion['dataError']>(row.data_error),
    success: row.success === null || row.success === undefined ? null : readJson<Conclusion['success']>(row.success),
    analyzedAt: row.analyzed_at, analysisStatus: row.analysis_status, createdAt: row.created_at,
  };
}

/** The read shape; calls recorded before the log table existed keep their JSON columns. */
export function toCall(row: CallRow, log: CallLog | undefined): Call {
  const conclusion = row.conclusion_id && row.conclusion_outcome && row.conclusion_created_at
    ? toConclusion({
        id: row.conclusion_id, call_id: row.id, outcome: row.conclusion_outcome, summary: row.conclusion_summary, data: row.conclusion_data,
        data_error: row.conclusion_data_error, success: row.conclusion_success, analyzed_at: row.conclusion_analyzed_at,
        analysis_status: row.conclusion_analysis_status, created_at: row.conclusion_created_at,
      })
    : null;
  const recording = row.recording_status === null ? null : {
    status: row.recording_status, durationMs: Number(row.recording_duration_ms), bytes: Number(row.recording_bytes),
    channels: row.recording_channels ?? 2, sampleRate: row.recording_sample_rate ?? 0,
  };
  const legacy = !log || (!log.transcript.length && !log.toolInvocations.length);
  const transcript = legacy ? readJson<TranscriptEntry[]>(row.transcript) : log.transcript;
  let index = 0;
  // Keys the caller pressed are a user turn too: the LLM answers them.
  const turns = transcript.flatMap((e) => (e.role !== 'assistant' ? (index++, [])
    : e.latencyMs !== undefined ? [{ index, at: e.at, latencyMs: e.latencyMs, ...(e.latency ? { latency: e.latency, endpointing: e.endpointing ?? 'vad' } : {}) }] : []));
  return {
    id: row.id,
    kind: row.kind,
    assistantId: row.kind === 'assistant' ? row.assistant_id : null,
    agentId: row.kind === 'agent' ? row.assistant_id : null,
    assistantVersion: row.kind === 'assistant' ? row.assistant_version : null,
    agentVersion: row.kind === 'agent' ? row.assistant_version : null,
    taskId: row.task_id,
    status: row.status,
    transport: readJson<Call['transport']>(row.transport),
    audio: row.audio ? readJson<Call['audio']>(row.audio) : null,
    providers: row.providers ? readJson<Call['providers']>(row.providers) : null,
    media: row.media ? readJson<Call['media']>(row.media) : null,
    answeredBy: row.answered_by,
    detection: row.detection ? readJson<Call['detection']>(row.detection) : null,
    turnTaking: row.false_interruptions === null ? null : {
      falseInterruptions: row.false_interruptions, speculativeStarts: row.speculative_starts ?? 0, speculativeDiscards: row.speculative_discards ?? 0,
    },
    userValues: readJson<Record<string, unknown>>(row.user_values),
    startedAt: row.started_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    failure: row.failure ? readJson<Call['failure']>(row.failure) : null,
    unfilledPlaceholders: row.unfilled_placeholders ? readJson<string[]>(row.unfilled_placeholders) : [],
    transcript,
    toolInvocations: legacy ? readJson<ToolInvocation[]>(row.tool_invocations) : log.toolInvocations,
    turns,
    conclusionId: row.conclusion_id,
    conclusion,
    recording,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export const CALL_SORT = { createdAt: 'created_at', updatedAt: 'updated_at' };

/** An organization's calls, of one assistant or agent and of one status when given, with their logs. */
export async function listCalls(
  db: Executor, organizationId: string, source: { kind: Kind; sourceId: string } | null, status: CallStatus | undefined, query: PageQuery, success?: boolean,
) {
  let select = callsWithConclusion(db, organizationId);
  if (source) select = select.where('calls.kind', '=', source.kind).where('calls.assistant_id', '=', source.sourceId);
  if (status) select = select.where('calls.status', '=', status);
  if (success !== undefined) select = select.where('calls.success', '=', success ? 1 : 0);
  // Only ended calls have a verdict: their counter is the one of the verdict alone.
  const total = success === undefined ? () => readCounter(db, callCounter(organizationId, source, status))
    : status && status !== 'ended' ? 0 : () => readCounter(db, successCounter(organizationId, source, success));
  const page = await fetchPage(select, query, CALL_SORT, total, { table: 'calls' });
  const logs = await loadLog(db, page.items.map((r) => r.id));
  return { ...page, items: page.items.map((row) => toCall(row, logs.get(row.id))) };
}

export async function findCall(db: Executor, organizationId: string, id: string): Promise<Call | undefined> {
  const row = await callsWithConclusion(db, organizationId).where('calls.id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  const logs = await loadLog(db, [row.id]);
  return toCall(row, logs.get(row.id));
}
