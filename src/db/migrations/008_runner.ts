import { sql } from 'kysely';
import type { Migration } from '../migrate.ts';
import { types } from '../columns.ts';

/**
 * What the one lease runner, bounded calls and fair webhooks need:
 * - calls are leased by the process that holds them (a heartbeat renews the lease), so a
 *   sweep can end the calls of a process that died;
 * - a call's transcript and tool invocations are appended as rows instead of rewriting one
 *   JSON value per turn (the JSON columns of 005 stay for calls recorded before);
 * - each attempt of an agent task is kept (when, outcome, SIP code, call);
 * - webhook deliveries carry the endpoint (URL origin) they go to and the call they are about,
 *   for per-endpoint fairness, circuit breaking and the delivery list of a call;
 * - an API token remembers the token that minted it, so revoking one revokes its children.
 */
export const m008Runner: Migration = {
  name: '008_runner',
  async up(db, dialect) {
    const t = types(dialect);
    await db.schema.alterTable('calls').addColumn('lease_owner', 'text').execute();
    await db.schema.alterTable('calls').addColumn('lease_expires_at', t.timestamp).execute();
    await db.schema.alterTable('calls').addColumn('failure', t.json).execute();
    await db.schema.alterTable('calls').addColumn('task_id', t.id).execute();
    await db.schema.alterTable('calls').addColumn('unfilled_placeholders', t.json).execute();
    await db.schema
      .createIndex('calls_live_leases')
      .on('calls')
      .columns(['lease_expires_at'])
      .where(sql.ref('status'), 'in', sql`('ringing', 'active')`)
      .execute();
    await db.schema
      .createIndex('calls_live_by_org')
      .on('calls')
      .columns(['organization_id'])
      .where(sql.ref('status'), 'in', sql`('ringing', 'active')`)
      .execute();

    await db.schema
      .createTable('call_entries')
      .addColumn('call_id', t.id, (c) => c.notNull().references('calls.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('organization_id', t.id, (c) => c.notNull())
      // user | assistant | tool
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('at', t.timestamp, (c) => c.notNull())
      .addColumn('text', 'text')
      // assistant: ms from the end of the user's turn to the first output of the answer
      .addColumn('latency_ms', 'integer')
      .addColumn('interrupted', t.bool)
      // tool: the invocation (id, name, arguments, ok, statusCode, latencyMs, outcome)
      .addColumn('detail', t.json)
      .addPrimaryKeyConstraint('call_entries_pk', ['call_id', 'seq'])
      .execute();
    await db.schema.createIndex('call_entries_org_at').on('call_entries').columns(['organization_id', 'at']).execute();

    await db.schema
      .createTable('agent_task_attempts')
      .addColumn('task_id', t.id, (c) => c.notNull().references('agent_tasks.id').onDelete('cascade'))
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('organization_id', t.id, (c) => c.notNull())
      .addColumn('started_at', t.timestamp, (c) => c.notNull())
      .addColumn('ended_at', t.timestamp)
      .addColumn('outcome', 'text')
      .addColumn('error', 'text')
      .addColumn('sip_code', 'integer')
      .addColumn('call_id', t.id)
      .addPrimaryKeyConstraint('agent_task_attempts_pk', ['task_id', 'attempt'])
      .execute();

    await db.schema.alterTable('webhook_deliveries').addColumn('endpoint', 'text', (c) => c.notNull().defaultTo('')).execute();
    await db.schema.alterTable('webhook_deliveries').addColumn('call_id', t.id).execute();
    await db.schema.createIndex('webhook_deliveries_org_call').on('webhook_deliveries').columns(['organization_id', 'call_id', 'created_at', 'id']).execute();
    for (const column of ['organization_id', 'endpoint']) {
      await db.schema
        .createIndex(`webhook_deliveries_in_flight_${column}`)
        .on('webhook_deliveries')
        .columns([column])
        .where(sql.ref('lease_owner'), 'is not', null)
        .execute();
    }
    await db.schema
      .createIndex('webhook_deliveries_settled')
      .on('webhook_deliveries')
      .columns(['updated_at'])
      .where(sql.ref('status'), 'in', sql`('delivered', 'failed')`)
      .execute();
    await db.schema
      .createTable('webhook_endpoints')
      .addColumn('endpoint', 'text', (c) => c.primaryKey())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('open_until', t.timestamp)
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();

    // Who minted a token: revoking a token revokes what it minted.
    await db.schema.alterTable('api_tokens').addColumn('created_by', t.id).execute();
    await db.schema.createIndex('api_tokens_created_by').on('api_tokens').column('created_by').execute();

    await db.schema.createIndex('rate_limit_windows_start').on('rate_limit_windows').column('window_start').execute();
  },
};
