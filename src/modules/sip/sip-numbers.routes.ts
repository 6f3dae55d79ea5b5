import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams, orgPath } from '../../http/schemas.ts';
import { updateRoutes } from '../../http/updates.ts';
import { SIP_NUMBER_SORT, listSipNumbers } from './sip-numbers.repository.ts';
import { SipNumber, SipNumberParams, SipNumberWrite } from './sip-numbers.schemas.ts';
import { createSipNumber, deleteSipNumber, getSipNumber, updateSipNumber } from './sip-numbers.service.ts';

const tags = ['SIP numbers'];
const BASE = '/sip/numbers';
const ITEM = `${BASE}/:sipNumberId`;
const read = { auth: { scope: 'organization', permission: 'sip:read' } } as const;
const write = { auth: { scope: 'organization', permission: 'sip:write' } } as const;

export const sipNumberRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.post(BASE, {
    config: { ...write, idempotent: true },
    schema: { tags, operationId: 'createSipNumber', summary: 'Create a SIP number', params: OrgParams, body: SipNumberWrite, response: responses(201, Envelope(SipNumber), [409]) },
  }, async (request, reply) => {
    const number = await createSipNumber(ctx, request.params.organizationId, request.body);
    return sendCreated(request, reply, `${orgPath(request.params)}${BASE}/${number.id}`, number);
  });

  app.get(BASE, {
    config: read,
    schema: { tags, operationId: 'listSipNumbers', summary: 'List SIP numbers', params: OrgParams, querystring: listQuery(SIP_NUMBER_SORT), response: responses(200, PageEnvelope(SipNumber)) },
  }, async (request) => pageBody(request, await listSipNumbers(ctx.db.kysely, request.params.organizationId, request.query)));

  app.get(ITEM, {
    config: read,
    schema: { tags, operationId: 'getSipNumber', summary: 'Get a SIP number', params: SipNumberParams, response: responses(200, Envelope(SipNumber)) },
  }, async (request) => envelope(request, await getSipNumber(ctx, request.params.organizationId, request.params.sipNumberId)));

  updateRoutes(app, {
    resource: 'SipNumber',
    url: ITEM, params: SipNumberParams, config: write, tags, what: 'a SIP number', read: SipNumber, write: SipNumberWrite, errors: [409],
    update: ({ params, edit }) => updateSipNumber(ctx, params.organizationId, params.sipNumberId, edit),
  });

  app.delete(ITEM, {
    config: write,
    schema: {
      tags, operationId: 'deleteSipNumber', summary: 'Delete a SIP number (409 while an assistant or agent uses it)',
      params: SipNumberParams, response: responses(200, EmptyEnvelope, [409]),
    },
  }, async (request) => {
    await deleteSipNumber(ctx, request.params.organizationId, request.params.sipNumberId);
    return envelope(request, null, 'Deleted');
  });
};
