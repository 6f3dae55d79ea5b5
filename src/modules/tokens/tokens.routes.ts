import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { readCounter } from '../../db/counters.ts';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { BASE_SORT, fetchPage, listQuery, pageBody } from '../../http/pagination.ts';
import { VendorParams } from '../../http/schemas.ts';
import { tokenCounters, toApiToken } from './tokens.repository.ts';
import { ApiToken, ApiTokenCreate, CreatedApiToken, TokenParams } from './tokens.schemas.ts';
import { createToken, revokeToken } from './tokens.service.ts';
import type { Principal } from '../../http/auth.ts';

const tags = ['API tokens'];
const BASE = '/api-tokens';
const read = { auth: { scope: 'vendor', permission: 'tokens:read' } } as const;
const write = { auth: { scope: 'vendor', permission: 'tokens:write' } } as const;

export const tokenRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, clock } = app.ctx;
  const { kysely } = db;
  /** An organization token sees and revokes only the tokens of its organization. */
  const ownOrganization = (principal: Principal | null) =>
    principal?.kind === 'token' ? principal.organizationId : null;

  app.post(BASE, {
    config: { ...write, idempotent: 'sealed' },
    schema: {
      tags, summary: 'Create an API token (its value is shown once, in this response)', params: VendorParams,
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
      tags, summary: 'List API tokens', params: VendorParams, querystring: listQuery(BASE_SORT),
      response: responses(200, PageEnvelope(ApiToken)),
    },
  }, async (request) => {
    const { vendorId } = request.params;
    const own = ownOrganization(request.principal);
    let query = kysely.selectFrom('api_tokens').selectAll().where('vendor_id', '=', vendorId);
    if (own) query = query.where('organization_id', '=', own);
    const counters = tokenCounters(vendorId, own);
    const page = await fetchPage(query, request.query, BASE_SORT, () =>
      readCounter(kysely, own ? counters.organization : counters.vendor),
    );
    return pageBody(request, { ...page, items: page.items.map(toApiToken) });
  });

  const findToken = (vendorId: string, tokenId: string, own: string | null) => {
    let query = kysely.selectFrom('api_tokens').selectAll().where('vendor_id', '=', vendorId).where('id', '=', tokenId);
    if (own) query = query.where('organization_id', '=', own);
    return query.executeTakeFirst();
  };

  app.get(`${BASE}/:tokenId`, {
    config: read,
    schema: { tags, summary: 'Get an API token', params: TokenParams, response: responses(200, Envelope(ApiToken)) },
  }, async (request) => {
    const row = await findToken(request.params.vendorId, request.params.tokenId, ownOrganization(request.principal));
    if (!row) throw notFound('API token');
    return envelope(request, toApiToken(row));
  });

  app.delete(`${BASE}/:tokenId`, {
    config: write,
    schema: {
      tags, summary: 'Revoke an API token, and every token it minted (at once; they stay listed with revokedAt)', params: TokenParams,
      response: responses(200, EmptyEnvelope),
    },
  }, async (request) => {
    const { vendorId, tokenId } = request.params;
    const row = await findToken(vendorId, tokenId, ownOrganization(request.principal));
    if (!row) throw notFound('API token');
    await revokeToken(db, clock, tokenId);
    return envelope(request, null, 'Revoked');
  });
};
