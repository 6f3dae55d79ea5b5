import type { Insertable, Selectable, Updateable } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import type { Executor } from '../../db/schema.ts';
import { BASE_SORT, fetchPage, type PageQuery } from '../../http/pagination.ts';
import type { SipCredentialTable } from './sip.table.ts';
import type { SipCredential, SipTransportName } from './sip-credentials.schemas.ts';

const counterOf = (organizationId: string) => `sip_credentials:${organizationId}`;

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
  return db.selectFrom('sip_credentials').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export async function listSipCredentials(db: Executor, organizationId: string, query: PageQuery) {
  const select = db.selectFrom('sip_credentials').selectAll().where('organization_id', '=', organizationId);
  const page = await fetchPage(select, query, BASE_SORT, () => readCounter(db, counterOf(organizationId)));
  return { ...page, items: page.items.map(toSipCredential) };
}

export async function insertSipCredential(db: Executor, row: Insertable<SipCredentialTable>): Promise<void> {
  await db.insertInto('sip_credentials').values(row).execute();
  await bumpCounter(db, counterOf(row.organization_id), 1);
}

export async function updateSipCredentialRow(db: Executor, organizationId: string, id: string, set: Updateable<SipCredentialTable>): Promise<void> {
  await db.updateTable('sip_credentials').set(set).where('organization_id', '=', organizationId).where('id', '=', id).execute();
}

export async function deleteSipCredentialRow(db: Executor, organizationId: string, id: string): Promise<void> {
  await db.deleteFrom('sip_credentials').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  await bumpCounter(db, counterOf(organizationId), -1);
}
