import type { Transaction } from 'kysely';
import type { Context } from '../../context.ts';
import type { Db } from '../../db/database.ts';
import type { Database } from '../../db/schema.ts';
import { badRequest, conflict, notFound } from '../../http/errors.ts';
import type { Edit } from '../../http/updates.ts';
import { firstUserOf } from '../assistants/assistants.repository.ts';
import { checkNumber } from '../../telephony/phone.ts';
import { findSipCredential } from './sip-credentials.repository.ts';
import { assertNumberUnclaimed } from './number-claims.ts';
import {
  deleteSipNumberRow, findByNumber, findSipNumber, insertSipNumber, toSipNumber, updateSipNumberRow,
} from './sip-numbers.repository.ts';
import type { SipNumber, SipNumberWrite } from './sip-numbers.schemas.ts';

type Deps = Pick<Context, 'db' | 'clock'>;
const NAME = 'SIP number';

/** The E.164 form of the body's number (our own: any valid number), or a 400 naming `number`. */
function e164Of(body: SipNumberWrite): string {
  const { number, problem } = checkNumber(body.number, 'own');
  if (problem !== undefined) throw badRequest('Invalid number', [{ path: 'number', message: problem }]);
  return number;
}

/**
 * The checks a write makes inside its transaction: credentials of this organization, number not
 * taken here, nor by another organization on the same trunk address.
 */
async function checkWrite(trx: Transaction<Database>, dialect: Db['dialect'], organizationId: string, body: SipNumberWrite, number: string, self: string | null) {
  const credential = await findSipCredential(trx, organizationId, body.sipCredentialId);
  if (!credential) {
    throw badRequest('Invalid references', [{ path: 'sipCredentialId', message: 'is not SIP credentials of this organization' }]);
  }
  const taken = await findByNumber(trx, organizationId, number);
  if (taken && taken.id !== self) {
    throw conflict('The number already exists in this organization', [{ path: 'number', message: `${number} is already a SIP number of this organization` }]);
  }
  await assertNumberUnclaimed(trx, dialect, organizationId, number, credential.hostname);
}

export async function createSipNumber({ db, clock }: Deps, organizationId: string, body: SipNumberWrite): Promise<SipNumber> {
  const number = e164Of(body);
  const at = clock.now().toISOString();
  const row = {
    id: crypto.randomUUID(), organization_id: organizationId, sip_credential_id: body.sipCredentialId, number,
    name: body.name ?? number, created_at: at, updated_at: at,
  };
  await db.kysely.transaction().execute(async (trx) => {
    await checkWrite(trx, db.dialect, organizationId, body, number, null);
    await insertSipNumber(trx, row);
  });
  return toSipNumber(row);
}

export async function getSipNumber({ db }: Deps, organizationId: string, id: string): Promise<SipNumber> {
  const row = await findSipNumber(db.kysely, organizationId, id);
  if (!row) throw notFound(NAME);
  return toSipNumber(row);
}

export async function updateSipNumber({ db, clock }: Deps, organizationId: string, id: string, edit: Edit<SipNumber, SipNumberWrite>): Promise<void> {
  await db.kysely.transaction().execute(async (trx) => {
    const row = await findSipNumber(trx, organizationId, id);
    if (!row) throw notFound(NAME);
    const body = edit(toSipNumber(row));
    const number = e164Of(body);
    await checkWrite(trx, db.dialect, organizationId, body, number, id);
    await updateSipNumberRow(trx, organizationId, id, { number, sip_credential_id: body.sipCredentialId, name: body.name ?? number, updated_at: clock.now().toISOString() });
  });
}

/** 409 while an assistant or agent uses the number. */
export async function deleteSipNumber({ db }: Deps, organizationId: string, id: string): Promise<void> {
  await db.kysely.transaction().execute(async (trx) => {
    if (!(await findSipNumber(trx, organizationId, id))) throw notFound(NAME);
    const user = await firstUserOf(trx, 'telephone_number_id', id);
    if (user) throw conflict(`The ${user.kind} "${user.name}" uses this number`);
    await deleteSipNumberRow(trx, organizationId, id);
  });
}
