import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { narrowedTo } from '../../http/auth.ts';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { BASE_SORT, listQuery, pageBody } from '../../http/pagination.ts';
import { VendorParams } from '../../http/schemas.ts';
import { listTokens } from './tokens.repository.ts';
import { ApiToken, ApiTokenCreate, CreatedApiToken, TokenParams } from './tokens.schemas.ts';
import { createToken, getToken, revokeToken } from './tokens.service.ts';

const tags = ['API tokens'];
const BASE = '/api-tokens';
const read = { auth: { scope: 'vendor', permission: 'tokens:read' } } as const;
const write = { auth: { scope: 'vendor', permission: 'tokens:write' } } as const;

export const tokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, clock } = app.ctx;

  app.post(BASE, {
    config: { ...write, idempotent: 'sealed' },
    schema: {
      tags, operationId: 'createApiToken', summary: 'Create an API token (its value is shown once, in this response)', params: VendorParams,
      body: ApiTokenCreate, response: responses(201, Envelope(CreatedApiToken)),
    },
  }, async (request, reply) => {
    const { vendorId } = request.params;
    const token = await createToken(db, clock, request.principal, { ...request.body, vendorId });
    return sendCreated(request, reply, `/api/v1/vendors/${vendorId}/api-tokens/${token.id}`, token);
  });

  app.get(BASE, {
    config: read,
    schema: {
      tags, operationId: 'listApiTokens', summary: 'List API tokens (an organization token sees its organization\'s only)', params: VendorParams, querystring: listQuery(BASE_SORT),
      response: responses(200, PageEnvelope(ApiToken)),
    },
  }, async (request) => pageBody(request, await listTokens(db.kysely, request.params.vendorId, narrowedTo(request.principal), request.query)));

  app.get(`${BASE}/:tokenId`, {
    config: read,
    schema: { tags, operationId: 'getApiToken', summary: 'Get an API token', params: TokenParams, response: responses(200, Envelope(ApiToken)) },
  }, async (request) => envelope(request, await getToken(db, request.principal, request.params.vendorId, request.params.tokenId)));

  app.delete(`${BASE}/:tokenId`, {
    config: write,
    schema: {
      tags, operationId: 'deleteApiToken', summary: 'Revoke an API token, and every token it minted (at once; they stay listed with revokedAt)', params: TokenParams,
      response: responses(200, EmptyEnvelope),
    },
  }, async (request) => {
    await revokeToken(db, clock, request.principal, request.params.vendorId, request.params.tokenId);
    return envelope(request, null, 'Revoked');
  });
};
