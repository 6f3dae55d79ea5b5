import type { Insertable, Selectable, Updateable } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import type { Executor } from '../../db/schema.ts';
import { BASE_SORT, fetchPage, type PageQuery } from '../../http/pagination.ts';
import type { ReferenceCheck } from '../assistants/assistants.service.ts';
import type { SipNumberTable } from './sip.table.ts';
import type { SipNumber } from './sip-numbers.schemas.ts';

const counterOf = (organizationId: string) => `sip_numbers:${organizationId}`;
export const SIP_NUMBER_SORT = { ...BASE_SORT, number: 'number' };

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

/** The organization's SIP number with this E.164 number, if any (numbers are unique per organization). */
export function findByNumber(db: Executor, organizationId: string, number: string) {
  return db.selectFrom('sip_numbers').select('id').where('organization_id', '=', organizationId).where('number', '=', number).executeTakeFirst();
}

/** The numbers that go out through these credentials. */
export function numbersOf(db: Executor, sipCredentialId: string) {
  return db.selectFrom('sip_numbers').select(['number']).where('sip_credential_id', '=', sipCredentialId).execute();
}

/** A SIP number that goes out through these credentials, if any (they cannot be deleted then). */
export function firstNumberOf(db: Executor, sipCredentialId: string) {
  return db.selectFrom('sip_numbers').select(['number']).where('sip_credential_id', '=', sipCredentialId).executeTakeFirst();
}

export async function listSipNumbers(db: Executor, organizationId: string, query: PageQuery) {
  const select = db.selectFrom('sip_numbers').selectAll().where('organization_id', '=', organizationId);
  const page = await fetchPage(select, query, SIP_NUMBER_SORT, () => readCounter(db, counterOf(organizationId)));
  return { ...page, items: page.items.map(toSipNumber) };
}

export async function insertSipNumber(db: Executor, row: Insertable<SipNumberTable>): Promise<void> {
  await db.insertInto('sip_numbers').values(row).execute();
  await bumpCounter(db, counterOf(row.organization_id), 1);
}

export async function updateSipNumberRow(db: Executor, organizationId: string, id: string, set: Updateable<SipNumberTable>): Promise<void> {
  await db.updateTable('sip_numbers').set(set).where('organization_id', '=', organizationId).where('id', '=', id).execute();
}

export async function deleteSipNumberRow(db: Executor, organizationId: string, id: string): Promise<void> {
  await db.deleteFrom('sip_numbers').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  await bumpCounter(db, counterOf(organizationId), -1);
}

/** An assistant's or agent's `telephoneNumberId` must name a SIP number of its organization. */
export const telephoneNumberCheck: ReferenceCheck = async (db, organizationId, body) => {
  const id = body.telephoneNumberId;
  if (!id) return [];
  const found = await findSipNumber(db, organizationId, id);
  return found ? [] : [{ path: 'telephoneNumberId', message: 'is not a SIP number of this organization' }];
};
