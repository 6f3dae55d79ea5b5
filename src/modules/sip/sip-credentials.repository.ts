import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { SipCredentialTable } from './sip.table.ts';
import type { SipCredential, SipTransportName } from './sip-credentials.schemas.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export const sipCredentialCounter = (organizationId: string) => `sip_credentials:${organizationId}`;

/** The read shape: everything but the password, which never leaves the service. */
export function toSipCredential(row: Selectable<SipCredentialTable>): SipCredential {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    hostname: row.hostname,
    port: row.port,
    transport: row.transport as SipTransportName,
    username: row.username,
    maxAgentTasks: row.max_agent_tasks,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function findSipCredential(db: Executor, organizationId: string, id: string) {
  return db
    .selectFrom('sip_credentials')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
}
