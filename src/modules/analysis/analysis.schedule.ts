import type { Transaction } from 'kysely';
import type { CallEnd } from '../../calls/record.ts';
import type { Database, Executor } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import { DEFAULT_MIN_TURNS, type AnalysisSetting } from '../assistants/after-call.schemas.ts';
import type { Kind } from '../assistants/assistants.repository.ts';
import { findAssistantAt } from '../assistants/versions.repository.ts';
import { RETRY_WINDOW_MS } from '../events/schedule.ts';

/** Caller turns of a call: what the caller said, and the keys they pressed. */
export const callerTurns = (transcript: CallEnd['transcript']) => transcript.filter((e) => e.role !== 'assistant').length;

/** The analysis an assistant or agent asks for at a version; null when none. */
export async function analysisSettingOf(trx: Executor, call: { organization_id: string; kind: string; assistant_id: string; assistant_version: number | null }) {
  const source = await findAssistantAt(trx, call.kind as Kind, call.organization_id, call.assistant_id, call.assistant_version);
  return source ? { source, setting: source.analysis ? readJson<AnalysisSetting>(source.analysis) : null } : null;
}

/** Makes a conclusion's analysis due now (again), with a fresh retry window. */
export function analysisDue(now: Date) {
  return {
    analysis_status: 'pending', analysis_attempts: 0, analysis_next_at: now.toISOString(),
    analysis_retry_until: new Date(now.getTime() + RETRY_WINDOW_MS).toISOString(), analysis_lease_owner: null, analysis_lease_expires_at: null, analysis_error: null,
  };
}

/**
 * In the transaction that ends a call: when its assistant (at the version the call ran) asks for
 * an analysis and the caller took at least `minTurns` turns, the conclusion's analysis is due.
 * The job runs it later: the end of the call never waits for the LLM.
 */
export async function scheduleAnalysis(trx: Transaction<Database>, callId: string, conclusionId: string, end: Pick<CallEnd, 'transcript'>, now: Date): Promise<void> {
  const call = await trx.selectFrom('calls').select(['organization_id', 'kind', 'assistant_id', 'assistant_version']).where('id', '=', callId).executeTakeFirst();
  if (!call) return;
  const found = await analysisSettingOf(trx, call);
  const setting = found?.setting;
  if (!setting || callerTurns(end.transcript) < (setting.minTurns ?? DEFAULT_MIN_TURNS)) return;
  await trx.updateTable('conclusions').set(analysisDue(now)).where('id', '=', conclusionId).execute();
}
