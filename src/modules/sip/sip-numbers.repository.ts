import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { SipNumberTable } from './sip.table.ts';
import type { ReferenceCheck } from '../assistants/assistants.service.ts';
import type { SipNumber } from './sip-numbers.schemas.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export const sipNumberCounter = (organizationId: string) => `sip_numbers:${organizationId}`;

export function toSipNumber(row: Selectable<SipNumberTable>): SipNumber {
  return {
    id: row.id,
    organizationId: row.organization_id,
    number: row.number,
    sipCredentialId: row.sip_credential_id,
    name: row.name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function findSipNumber(db: Executor, organizationId: string, id: string) {
  return db.selectFrom('sip_numbers').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

/** An assistant's or agent's `telephoneNumberId` must name a SIP number of its organization. */
export const telephoneNumberCheck: ReferenceCheck = async (db, organizationId, body) => {
  const id = body.telephoneNumberId;
  if (!id) return [];
  const found = await findSipNumber(db, organizationId, id);
  return found ? [] : [{ path: 'telephoneNumberId', message: 'is not a SIP number of this organization' }];
};
