import { sql, type Selectable, type Transaction } from 'kysely';
import type { Context } from '../../context.ts';
import type { Database } from '../../db/schema.ts';
import { bumpCounter } from '../../db/counters.ts';
import { readJson } from '../../db/values.ts';
import { fillPlaceholders } from '../../calls/template.ts';
import { describeLlmFailure } from '../../calls/llm.ts';
import type { JobKind } from '../../jobs/runner.ts';
import { LIMITS } from '../assistants/assistants.schemas.ts';
import { loadLog, refOf, successCounter } from '../calls/calls.repository.ts';
import type { ConclusionTable } from '../calls/calls.table.ts';
import { enqueueEvent } from '../events/outbox.ts';
import { nextAttemptAt } from '../events/schedule.ts';
import { isCallLlm, type LlmForCall } from './analysis.llm.ts';
import { analyzeCall, type AnalysisResult } from './analysis.run.ts';
import { analysisSettingOf } from './analysis.schedule.ts';

export const ANALYSIS_JOB = 'call_analysis';

type ConclusionRow = Selectable<ConclusionTable>;

export interface AnalysisJob {
  readonly id: string;
  readonly row: ConclusionRow;
}

/** The fields the conclusion read shape and call_analyzed share. */
export const analysisFields = (result: AnalysisResult, analyzedAt: string) => ({
  summary: result.summary, data: result.data, dataError: result.dataError, success: result.success, analyzedAt,
});

/**
 * Analyses of ended calls, as the runner's jobs: the conclusion's row is the job. A claim leases
 * due analyses; each sends the call (transcript, keys, tool calls and their results) to the LLM
 * of the call's organization and strategy, and stores summary, data and success on the
 * conclusion, the pass_fail verdict on the call (for the list's filter), and call_analyzed in the
 * outbox, in one transaction. An LLM that fails is tried again with the webhook backoff for 24
 * hours, then the analysis is `failed`.
 */
export function analysisJobs(ctx: Context, llmFor: LlmForCall, options: { leaseMs: number; concurrency?: number; random?: () => number }): JobKind<AnalysisJob> {
  const { db, clock, log } = ctx;
  const { kysely, dialect } = db;
  // One attempt makes up to four LLM requests: its lease must outlast them.
  const leaseMs = Math.max(options.leaseMs, (ctx.config.llmFirstTokenMs + ctx.config.llmTokenGapMs) * 4);

  /** Only the claim that ran it may record it: the same owner, still pending. */
  const mine = (row: ConclusionRow) => (trx: Transaction<Database>) => trx.updateTable('conclusions')
    .where('id', '=', row.id).where('analysis_lease_owner', '=', row.analysis_lease_owner).where('analysis_status', '=', 'pending');

  async function finish(row: ConclusionRow, result: AnalysisResult): Promise<void> {
    const now = clock.now();
    const at = now.toISOString();
    await kysely.transaction().execute(async (trx) => {
      const done = await mine(row)(trx).set({
        summary: result.summary, data: result.data === null ? null : JSON.stringify(result.data), data_error: result.dataError ? JSON.stringify(result.dataError) : null,
        success: result.success === null ? null : JSON.stringify(result.success), analyzed_at: at,
        analysis_status: 'done', analysis_lease_owner: null, analysis_lease_expires_at: null, analysis_error: null,
      }).executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) return;
      const call = await trx.selectFrom('calls').select(['id', 'organization_id', 'kind', 'assistant_id', 'success']).where('id', '=', row.call_id).executeTakeFirstOrThrow();
      const ref = refOf(call);
      const before = call.success === null ? null : call.success === true || call.success === 1;
      const after = typeof result.success === 'boolean' ? result.success : null;
      if (before !== after) {
        await trx.updateTable('calls').set({ success: after === null ? null : after ? 1 : 0 }).where('id', '=', call.id).execute();
        for (const source of [null, { kind: ref.kind, sourceId: ref.sourceId }]) {
          if (before !== null) await bumpCounter(trx, successCounter(ref.organizationId, source, before), -1);
          if (after !== null) await bumpCounter(trx, successCounter(ref.organizationId, source, after), 1);
        }
      }
      await enqueueEvent(trx, {
        organizationId: ref.organizationId, sourceKind: ref.kind, sourceId: ref.sourceId, type: 'call_analyzed',
        payload: { callId: call.id, conclusionId: row.id, ...analysisFields(result, at) },
      }, now);
    });
  }

  async function failed(row: ConclusionRow, error: string, retry: boolean): Promise<void> {
    const now = clock.now();
    const attempt = (row.analysis_attempts ?? 0) + 1;
    const next = retry ? nextAttemptAt(now, attempt, row.analysis_retry_until ?? now.toISOString(), options.random) : null;
    await kysely.transaction().execute((trx) => mine(row)(trx).set({
      analysis_status: next ? 'pending' : 'failed', analysis_attempts: attempt, analysis_next_at: next?.toISOString() ?? null,
      analysis_lease_owner: null, analysis_lease_expires_at: null, analysis_error: error,
    }).execute());
    if (!next) log.warn({ conclusionId: row.id, callId: row.call_id, attempts: attempt, error }, 'a call analysis failed for good');
  }

  return {
    name: ANALYSIS_JOB,
    concurrency: options.concurrency ?? 4,
    leaseMs,

    async claim({ owner, now, leaseUntil, limit }) {
      const at = now.toISOString();
      const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
      const { rows } = await sql<ConclusionRow>`
        update conclusions set analysis_lease_owner = ${owner}, analysis_lease_expires_at = ${leaseUntil.toISOString()}, analysis_next_at = null
        where id in (
          select id from conclusions where analysis_status = 'pending' and analysis_next_at <= ${at}
          order by analysis_next_at, id limit ${limit} ${lock}
        ) and analysis_status = 'pending' and analysis_next_at <= ${at}
        returning *`.execute(kysely);
      return rows.map((row) => ({ id: row.id, row }));
    },

    async run({ row }, signal) {
      const call = await kysely.selectFrom('calls').selectAll().where('id', '=', row.call_id).executeTakeFirst();
      // The call as it ran (its strategy's LLM, its prompt) at the version it ran; what to find out,
      // the assistant's analysis as it is now: a run asked for again after the plan changed follows the new plan.
      const ran = call ? await analysisSettingOf(kysely, call) : null;
      const now = call ? await analysisSettingOf(kysely, { ...call, assistant_version: null }) : null;
      if (!call || !ran || !now?.setting) return failed(row, now ? 'the assistant no longer asks for an analysis' : 'the call or its assistant is gone', false);
      const { source } = ran;
      const { setting } = now;
      const values = readJson<Record<string, unknown>>(call.user_values);
      const log = (await loadLog(kysely, [call.id])).get(call.id);
      const transcript = log?.transcript.length ? log.transcript : readJson<[]>(row.transcript);
      // The LLM of the call's strategy at the version the call ran; one it could not use (no key
      // yet, a refused base URL) is tried again like a failing one: the operator may add the key.
      const target = await llmFor({ organizationId: call.organization_id, strategyId: source.strategy_id });
      if (!isCallLlm(target)) return failed(row, `${target.source}: ${target.message}`, true);
      let result: AnalysisResult;
      try {
        result = await analyzeCall(target, setting, {
          systemPrompt: source.system_prompt ? fillPlaceholders(source.system_prompt, values, LIMITS.systemPrompt).text : null,
          transcript, toolInvocations: log?.toolInvocations ?? [], startedAt: call.started_at,
        }, values, signal);
      } catch (err) {
        if (signal.aborted) return; // stopping: the lease brings it back
        const failure = describeLlmFailure(err);
        return failed(row, `${failure.statusCode ? `HTTP ${failure.statusCode}: ` : ''}${failure.message}`, true);
      } finally {
        await target.close();
      }
      await finish(row, result);
    },

    async renew({ owner, ids, leaseUntil }) {
      const rows = await kysely.updateTable('conclusions').set({ analysis_lease_expires_at: leaseUntil.toISOString() })
        .where('id', 'in', ids).where('analysis_lease_owner', '=', owner).where('analysis_status', '=', 'pending')
        .returning('id').execute();
      return new Set(rows.map((r) => r.id));
    },

    async reclaim(now) {
      const at = now.toISOString();
      const rows = await kysely.updateTable('conclusions')
        .set({ analysis_lease_owner: null, analysis_lease_expires_at: null, analysis_next_at: at })
        .where('analysis_status', '=', 'pending').where('analysis_lease_owner', 'is not', null).where('analysis_lease_expires_at', '<', at)
        .returning('id').execute();
      return rows.length;
    },
  };
}
