import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { readBool } from '../../db/values.ts';
import type { SipCredentialTable, SipRegistrationTable } from './sip.table.ts';
import type { SipCredential, SipRegistration, SipTransportName } from './sip-credentials.schemas.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export const sipCredentialCounter = (organizationId: string) => `sip_credentials:${organizationId}`;

type RegistrationColumns = Pick<SipRegistrationTable, 'owner' | 'lease_expires_at' | 'state' | 'last_status_code' | 'expires_at'>;
/** A credential row with its registration's columns (null without a registration row). */
export type SipCredentialRow = Selectable<SipCredentialTable> & { [K in keyof RegistrationColumns as `registration_${K}`]: RegistrationColumns[K] | null };

/**
 * The registration as the read shape shows it: what the process holding it last saw, or
 * `unregistered` when no process holds it (none has taken it yet, or its holder stopped).
 */
export function registrationOf(row: SipCredentialRow, now: Date): SipRegistration | null {
  if (!readBool(row.register)) return null;
  const held = row.registration_owner !== null && row.registration_lease_expires_at !== null && Date.parse(row.registration_lease_expires_at) > now.getTime();
  if (!held || !row.registration_state) return { state: 'unregistered', lastStatusCode: row.registration_last_status_code ?? null, expiresAt: null };
  return { state: row.registration_state as SipRegistration['state'], lastStatusCode: row.registration_last_status_code, expiresAt: row.registration_expires_at };
}

/** The read shape: everything but the password, which never leaves the service. */
export function toSipCredential(row: SipCredentialRow, now: Date): SipCredential {
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
    registration: registrationOf(row, now),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Credentials of an organization, each with its registration's state. */
export function sipCredentialsQuery(db: Executor, organizationId: string) {
  return db
    .selectFrom('sip_credentials')
    .leftJoin('sip_registrations', 'sip_registrations.sip_credential_id', 'sip_credentials.id')
    .selectAll('sip_credentials')
    .select([
      'sip_registrations.owner as registration_owner', 'sip_registrations.lease_expires_at as registration_lease_expires_at',
      'sip_registrations.state as registration_state', 'sip_registrations.last_status_code as registration_last_status_code',
      'sip_registrations.expires_at as registration_expires_at',
    ])
    .where('sip_credentials.organization_id', '=', organizationId);
}

export function findSipCredential(db: Executor, organizationId: string, id: string) {
  return db
    .selectFrom('sip_credentials')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
}
