import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { narrowedTo } from '../../http/auth.ts';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { BASE_SORT, listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams, VendorParams } from '../../http/schemas.ts';
import { updateRoutes } from '../../http/updates.ts';
import { listOrganizations, type OrganizationDependent } from './organizations.repository.ts';
import { Organization, OrganizationWrite } from './organizations.schemas.ts';
import { createOrganization, deleteOrganization, getOrganization, updateOrganization } from './organizations.service.ts';

const tags = ['Organizations'];
const read = { auth: { scope: 'organization', permission: 'organizations:read' } } as const;
const write = { auth: { scope: 'organization', permission: 'organizations:write' } } as const;

/** Creating and listing organizations: registered under the vendor scope. */
export const organizationVendorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.post('/organizations', {
    config: { auth: { scope: 'vendor', permission: 'organizations:write' }, idempotent: true },
    schema: {
      tags, operationId: 'createOrganization', summary: 'Create an organization', params: VendorParams, body: OrganizationWrite,
      response: responses(201, Envelope(Organization)),
    },
  }, async (request, reply) => {
    const { vendorId } = request.params;
    const organization = await createOrganization(ctx, request.principal, vendorId, request.body);
    return sendCreated(request, reply, `/api/v1/vendors/${vendorId}/organizations/${organization.id}`, organization);
  });

  app.get('/organizations', {
    config: { auth: { scope: 'vendor', permission: 'organizations:read' } },
    schema: {
      tags, operationId: 'listOrganizations', summary: 'List organizations (an organization token sees its own only)', params: VendorParams, querystring: listQuery(BASE_SORT),
      response: responses(200, PageEnvelope(Organization)),
    },
  }, async (request) => pageBody(request, await listOrganizations(ctx.db.kysely, request.params.vendorId, narrowedTo(request.principal), request.query)));
};

/** One organization: registered under the organization scope (its own path is the scope's prefix). */
export const organizationRoutes: FastifyPluginAsyncTypebox<{ dependents: readonly OrganizationDependent[] }> = async (app, { dependents }) => {
  const { ctx } = app;

  app.get('', {
    config: read,
    schema: { tags, operationId: 'getOrganization', summary: 'Get an organization', params: OrgParams, response: responses(200, Envelope(Organization)) },
  }, async (request) => envelope(request, await getOrganization(ctx, request.params.vendorId, request.params.organizationId)));

  updateRoutes(app, {
    resource: 'Organization',
    url: '', params: OrgParams, config: write, tags, what: 'an organization', read: Organization, write: OrganizationWrite,
    update: ({ params, edit }) => updateOrganization(ctx, params.vendorId, params.organizationId, edit),
  });

  app.delete('', {
    config: write,
    schema: {
      tags, operationId: 'deleteOrganization', summary: 'Delete an organization (it must hold no resources); its API tokens go with it',
      params: OrgParams, response: responses(200, EmptyEnvelope, [409]),
    },
  }, async (request) => {
    await deleteOrganization(ctx, request.params.vendorId, request.params.organizationId, dependents);
    return envelope(request, null, 'Deleted');
  });
};
