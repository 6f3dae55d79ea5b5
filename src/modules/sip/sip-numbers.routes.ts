import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely, Transaction } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import type { Database } from '../../db/schema.ts';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { badRequest, conflict, notFound } from '../../http/errors.ts';
import { BASE_SORT, fetchPage, listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams, orgPath } from '../../http/schemas.ts';
import { checkNumber } from '../tasks/phone.ts';
import { findSipCredential } from './sip-credentials.repository.ts';
import { findSipNumber, sipNumberCounter, toSipNumber } from './sip-numbers.repository.ts';
import { SipNumber, SipNumberParams, SipNumberWrite } from './sip-numbers.schemas.ts';

const tags = ['SIP numbers'];
const BASE = '/sip/numbers';
const read = { auth: { scope: 'organization', permission: 'sip:read' } } as const;
const write = { auth: { scope: 'organization', permission: 'sip:write' } } as const;
const SORT = { ...BASE_SORT, number: 'number' };
const NOT_FOUND = 'SIP number';

type Executor = Kysely<Database> | Transaction<Database>;

/** The E.164 form of the body's number, or a 400 naming `number`. */
function e164Of(body: SipNumberWrite): string {
  const { number, problem } = checkNumber(body.number, 'own');
  if (problem !== undefined) throw badRequest('Invalid number', [{ path: 'number', message: problem }]);
  return number;
}

/** The checks a write makes inside its transaction: credentials of this organization, number not taken. */
async function checkWrite(db: Executor, organizationId: string, body: SipNumberWrite, number: string, self: string | null) {
  if (!(await findSipCredential(db, organizationId, body.sipCredentialId))) {
    throw badRequest('Invalid references', [{ path: 'sipCredentialId', message: 'is not SIP credentials of this organization' }]);
  }
  const taken = await db.selectFrom('sip_numbers').select('id').where('organization_id', '=', organizationId).where('number', '=', number).executeTakeFirst();
  if (taken && taken.id !== self) {
    throw conflict('The number already exists in this organization', [{ path: 'number', message: `${number} is already a SIP number of this organization` }]);
  }
}

export const sipNumberRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { kysely } = app.ctx.db;
  const now = () => app.ctx.clock.now().toISOString();

  app.post(BASE, {
    config: { ...write, idempotent: true },
    schema: { tags, summary: 'Create a SIP number', params: OrgParams, body: SipNumberWrite, response: responses(201, Envelope(SipNumber), [409]) },
  }, async (request, reply) => {
    const { organizationId } = request.params;
    const number = e164Of(request.body);
    const at = now();
    const row = {
      id: crypto.randomUUID(),
      organization_id: organizationId,
      sip_credential_id: request.body.sipCredentialId,
      number,
      name: request.body.name ?? number,
      created_at: at,
      updated_at: at,
    };
    await kysely.transaction().execute(async (trx) => {
      await checkWrite(trx, organizationId, request.body, number, null);
      await trx.insertInto('sip_numbers').values(row).execute();
      await bumpCounter(trx, sipNumberCounter(organizationId), 1);
    });
    return sendCreated(request, reply, `${orgPath(request.params)}/sip/numbers/${row.id}`, toSipNumber(row));
  });

  app.get(BASE, {
    config: read,
    schema: { tags, summary: 'List SIP numbers', params: OrgParams, querystring: listQuery(SORT), response: responses(200, PageEnvelope(SipNumber)) },
  }, async (request) => {
    const { organizationId } = request.params;
    const query = kysely.selectFrom('sip_numbers').selectAll().where('organization_id', '=', organizationId);
    const page = await fetchPage(query, request.query, SORT, () => readCounter(kysely, sipNumberCounter(organizationId)));
    return pageBody(request, { ...page, items: page.items.map(toSipNumber) });
  });

  app.get(`${BASE}/:sipNumberId`, {
    config: read,
    schema: { tags, summary: 'Get a SIP number', params: SipNumberParams, response: responses(200, Envelope(SipNumber)) },
  }, async (request) => {
    const row = await findSipNumber(kysely, request.params.organizationId, request.params.sipNumberId);
    if (!row) throw notFound(NOT_FOUND);
    return envelope(request, toSipNumber(row));
  });

  app.put(`${BASE}/:sipNumberId`, {
    config: write,
    schema: { tags, summary: 'Replace a SIP number', params: SipNumberParams, body: SipNumberWrite, response: responses(200, EmptyEnvelope, [409]) },
  }, async (request) => {
    const { organizationId, sipNumberId } = request.params;
    const number = e164Of(request.body);
    await kysely.transaction().execute(async (trx) => {
      if (!(await findSipNumber(trx, organizationId, sipNumberId))) throw notFound(NOT_FOUND);
      await checkWrite(trx, organizationId, request.body, number, sipNumberId);
      await trx
        .updateTable('sip_numbers')
        .set({ number, sip_credential_id: request.body.sipCredentialId, name: request.body.name ?? number, updated_at: now() })
        .where('id', '=', sipNumberId)
        .execute();
    });
    return envelope(request, null, 'Updated');
  });

  app.delete(`${BASE}/:sipNumberId`, {
    config: write,
    schema: {
      tags, summary: 'Delete a SIP number (409 while an assistant or agent uses it)',
      params: SipNumberParams, response: responses(200, EmptyEnvelope, [409]),
    },
  }, async (request) => {
    const { organizationId, sipNumberId } = request.params;
    await kysely.transaction().execute(async (trx) => {
      if (!(await findSipNumber(trx, organizationId, sipNumberId))) throw notFound(NOT_FOUND);
      const user = await trx.selectFrom('assistants').select(['kind', 'name']).where('telephone_number_id', '=', sipNumberId).executeTakeFirst();
      if (user) throw conflict(`The ${user.kind} "${user.name}" uses this number`);
      await trx.deleteFrom('sip_numbers').where('id', '=', sipNumberId).execute();
      await bumpCounter(trx, sipNumberCounter(organizationId), -1);
    });
    return envelope(request, null, 'Deleted');
  });
};
