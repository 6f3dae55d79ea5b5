import type { Kysely } from 'kysely';
import type { Context } from '../../context.ts';
import type { Database } from '../../db/schema.ts';
import type { SipTransport } from '../../sip/resolve.ts';
import type { Answerer, TelephonyDirectory } from '../../telephony/directory.ts';

/**
 * Who answers a call to `number` in this organization: the assistant whose telephone number
 * it is, else the agent (an agent's callee calling back); the oldest when several share the
 * number, so the choice is stable. `no_number` when the organization has no such SIP number.
 */
export async function answeringAssistant(db: Kysely<Database>, organizationId: string, number: string): Promise<Answerer> {
  const found = await db.selectFrom('sip_numbers').select('id').where('organization_id', '=', organizationId).where('number', '=', number).executeTakeFirst();
  if (!found) return 'no_number';
  for (const kind of ['assistant', 'agent'] as const) {
    const row = await db.selectFrom('assistants').select('id')
      .where('organization_id', '=', organizationId).where('kind', '=', kind).where('telephone_number_id', '=', found.id)
      .orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
    if (row) return { kind, id: row.id };
  }
  return 'no_assistant';
}

/** Telephony's view of the SIP numbers, their credentials and who answers them, read from the database. */
export function telephonyDirectory(ctx: Pick<Context, 'db' | 'secrets'>): TelephonyDirectory {
  const { kysely } = ctx.db;
  return {
    async numberTrunks(numbers) {
      if (!numbers.length) return [];
      const rows = await kysely.selectFrom('sip_numbers as n')
        .innerJoin('sip_credentials as cr', 'cr.id', 'n.sip_credential_id')
        .select(['n.organization_id', 'n.number', 'cr.id as credentialId', 'cr.hostname', 'cr.port', 'cr.transport', 'cr.max_agent_tasks'])
        .where('n.number', 'in', [...numbers])
        .orderBy('n.created_at').orderBy('n.id')
        .execute();
      return rows.map((r) => ({
        organizationId: r.organization_id, number: r.number, credentialId: r.credentialId,
        hostname: r.hostname, port: r.port, transport: r.transport as SipTransport, maxCalls: r.max_agent_tasks,
      }));
    },

    answerer: (organizationId, number) => answeringAssistant(kysely, organizationId, number),

    async dialRoute(organizationId, agentId) {
      const row = await kysely.selectFrom('assistants as a')
        .innerJoin('sip_numbers as n', 'n.id', 'a.telephone_number_id')
        .innerJoin('sip_credentials as cr', 'cr.id', 'n.sip_credential_id')
        .select(['n.number', 'cr.id as credentialId', 'cr.hostname', 'cr.port', 'cr.transport', 'cr.username', 'cr.password_sealed'])
        .where('a.id', '=', agentId).where('a.organization_id', '=', organizationId)
        .executeTakeFirst();
      if (!row) return null;
      const trunk = { hostname: row.hostname, port: row.port, transport: row.transport as SipTransport, username: row.username, password: ctx.secrets.open(row.password_sealed) };
      return { number: row.number, credentialId: row.credentialId, trunk };
    },
  };
}
