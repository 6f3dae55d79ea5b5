import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { readCounter } from '../../db/counters.ts';
import { updateRoutes } from '../../http/updates.ts';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { fetchPage, listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams, orgPath } from '../../http/schemas.ts';
import { findCredentialOfProvider, findProviderCredential, providerCredentialCounter, toProviderCredential } from './providers.repository.ts';
import {
  PROVIDER_SORT, ProviderCredential, ProviderCredentialCreate, ProviderCredentialParams, ProviderCredentialUpdate, ProviderFilter, type ProviderName,
} from './providers.schemas.ts';
import { createProviderCredential, deleteProviderCredential, updateProviderCredential } from './providers.service.ts';

const tags = ['Provider credentials'];
const BASE = '/provider-credentials';
const read = { auth: { scope: 'organization', permission: 'providers:read' } } as const;
const write = { auth: { scope: 'organization', permission: 'providers:write' } } as const;

/** The organization's keys for speech providers (and its Twilio auth token); the key is write-only. */
export const providerCredentialRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { kysely } = app.ctx.db;

  app.post(BASE, {
    config: { ...write, idempotent: true },
    schema: {
      tags, operationId: 'createProviderCredential', summary: 'Store a provider credential', description: 'One per provider per organization: a second is a 409 naming `provider`.',
      params: OrgParams, body: ProviderCredentialCreate, response: responses(201, Envelope(ProviderCredential)),
    },
  }, async (request, reply) => {
    const created = await createProviderCredential(app.ctx, request.params.organizationId, request.body);
    return sendCreated(request, reply, `${orgPath(request.params)}${BASE}/${created.id}`, created);
  });

  app.get(BASE, {
    config: read,
    schema: {
      tags, operationId: 'listProviderCredentials', summary: 'List provider credentials (keys masked)', params: OrgParams,
      querystring: listQuery(PROVIDER_SORT, ProviderFilter, 'provider,asc'), response: responses(200, PageEnvelope(ProviderCredential)),
    },
  }, async (request) => {
    const { organizationId } = request.params;
    const { provider } = request.query as typeof request.query & { provider?: ProviderName };
    let query = kysely.selectFrom('provider_credentials').selectAll().where('organization_id', '=', organizationId);
    if (provider) query = query.where('provider', '=', provider);
    // A provider has at most one credential per organization: the filtered total is whether it exists.
    const total = provider
      ? async () => ((await findCredentialOfProvider(kysely, organizationId, provider)) ? 1 : 0)
      : () => readCounter(kysely, providerCredentialCounter(organizationId));
    const page = await fetchPage(query, request.query, PROVIDER_SORT, total);
    return pageBody(request, { ...page, items: page.items.map(toProviderCredential) });
  });

  app.get(`${BASE}/:providerCredentialId`, {
    config: read,
    schema: { tags, operationId: 'getProviderCredential', summary: 'Get a provider credential (key masked)', params: ProviderCredentialParams, response: responses(200, Envelope(ProviderCredential)) },
  }, async (request) => {
    const row = await findProviderCredential(kysely, request.params.organizationId, request.params.providerCredentialId);
    if (!row) throw notFound('Provider credential');
    return envelope(request, toProviderCredential(row));
  });

  updateRoutes(app, {
    resource: 'ProviderCredential',
    url: `${BASE}/:providerCredentialId`, params: ProviderCredentialParams, config: write, tags, what: 'a provider credential',
    read: ProviderCredential, write: ProviderCredentialUpdate, errors: [409],
    description: 'A body without `apiKey` (or with ********) keeps the stored key, except when `baseUrl` changes: then the key must be sent again (400 on `apiKey`). `provider` cannot change.',
    update: ({ params, edit }) => updateProviderCredential(app.ctx, params.organizationId, params.providerCredentialId, edit),
  });

  app.delete(`${BASE}/:providerCredentialId`, {
    config: write,
    schema: { tags, operationId: 'deleteProviderCredential', summary: 'Delete a provider credential', params: ProviderCredentialParams, response: responses(200, EmptyEnvelope) },
  }, async (request) => {
    await deleteProviderCredential(app.ctx, request.params.organizationId, request.params.providerCredentialId);
    return envelope(request, null, 'Deleted');
  });
};
