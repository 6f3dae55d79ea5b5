import type { Insertable, Selectable, Updateable } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import type { Executor } from '../../db/schema.ts';
import { BASE_SORT, fetchPage, type PageQuery } from '../../http/pagination.ts';
import { readBool } from '../../db/values.ts';
import type { SipCredentialTable, SipRegistrationTable } from './sip.table.ts';
import type { SipCredential, SipRegistrationStatus, SipTransportName } from './sip-credentials.schemas.ts';

const counterOf = (organizationId: string) => `sip_credentials:${organizationId}`;

type RegistrationRow = Pick<Selectable<SipRegistrationTable>, 'state' | 'last_status_code' | 'expires_at' | 'lease_expires_at'>;

/**
 * How the credentials' registration stands: null when they do not register; `unregistered` when
 * no process holds it (none yet, or its holder stopped renewing the lease: what it last wrote is
 * stale then, but its last status code is kept as a clue).
 */
export function registrationOf(register: boolean, row: RegistrationRow | undefined, now: Date): SipRegistrationStatus | null {
  if (!register) return null;
  if (!row) return { state: 'unregistered', lastStatusCode: null, expiresAt: null };
  if (Date.parse(row.lease_expires_at) <= now.getTime()) return { state: 'unregistered', lastStatusCode: row.last_status_code, expiresAt: null };
  return { state: row.state as SipRegistrationStatus['state'], lastStatusCode: row.last_status_code, expiresAt: row.expires_at ? new Date(row.expires_at).toISOString() : null };
}

/** The registration rows of these credentials, by credential id. */
export async function findRegistrations(db: Executor, ids: readonly string[]): Promise<Map<string, RegistrationRow>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('sip_registrations').select(['sip_credential_id', 'state', 'last_status_code', 'expires_at', 'lease_expires_at'])
    .where('sip_credential_id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.sip_credential_id, r]));
}

/** The read shape: everything but the password, which never leaves the service, and with how its registration stands. */
export function toSipCredential(row: Selectable<SipCredentialTable>, registration: SipRegistrationStatus | null): SipCredential {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    hostname: row.hostname,
    port: row.port,
    transport: row.transport as SipTransportName,
    username: row.username,
    maxAgentTasks: row.max_agent_tasks,
    register: readBool(row.register),
    registration,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function findSipCredential(db: Executor, organizationId: string, id: string) {
  return db.selectFrom('sip_credentials').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

/** The read shape of a stored row, its registration read now. */
export async function readSipCredential(db: Executor, row: Selectable<SipCredentialTable>, now: Date): Promise<SipCredential> {
  const registrations = await findRegistrations(db, [row.id]);
  return toSipCredential(row, registrationOf(readBool(row.register), registrations.get(row.id), now));
}

export async function listSipCredentials(db: Executor, organizationId: string, query: PageQuery, now: Date) {
  const select = db.selectFrom('sip_credentials').selectAll().where('organization_id', '=', organizationId);
  const page = await fetchPage(select, query, BASE_SORT, () => readCounter(db, counterOf(organizationId)));
  const registrations = await findRegistrations(db, page.items.map((row) => row.id));
  return { ...page, items: page.items.map((row) => toSipCredential(row, registrationOf(readBool(row.register), registrations.get(row.id), now))) };
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
