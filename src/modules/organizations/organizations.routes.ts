import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sql } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import { bumpAuthEpoch } from '../../http/auth-cache.ts';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { conflict, forbidden, notFound } from '../../http/errors.ts';
import { BASE_SORT, fetchPage, listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams, VendorParams } from '../../http/schemas.ts';
import { tokenCounters } from '../tokens/tokens.repository.ts';
import { findOrganization, orgCounter, toOrganization, type OrganizationDependent } from './organizations.repository.ts';
import { Organization, OrganizationWrite } from './organizations.schemas.ts';

const tags = ['Organizations'];
const read = { auth: { scope: 'organization', permission: 'organizations:read' } } as const;
const write = { auth: { scope: 'organization', permission: 'organizations:write' } } as const;

/** Creating and listing organizations: registered under the vendor scope. */
export const organizationVendorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { kysely } = app.ctx.db;
  const now = () => app.ctx.clock.now().toISOString();

  app.post('/organizations', {
    config: { auth: { scope: 'vendor', permission: 'organizations:write' }, idempotent: true },
    schema: {
      tags, summary: 'Create an organization', params: VendorParams, body: OrganizationWrite,
      response: responses(201, Envelope(Organization)),
    },
  }, async (request, reply) => {
    const { principal } = request;
    if (principal?.kind === 'token' && principal.organizationId) throw forbidden('An organization token cannot create organizations');
    const at = now();
    const { vendorId } = request.params;
    const row = { id: crypto.randomUUID(), vendor_id: vendorId, name: request.body.name, created_at: at, updated_at: at };
    await kysely.transaction().execute(async (trx) => {
      await trx.insertInto('organizations').values(row).execute();
      await bumpCounter(trx, orgCounter(vendorId), 1);
    });
    return sendCreated(request, reply, `/api/v1/vendors/${vendorId}/organizations/${row.id}`, toOrganization(row));
  });

  app.get('/organizations', {
    config: { auth: { scope: 'vendor', permission: 'organizations:read' } },
    schema: {
      tags, summary: 'List organizations', params: VendorParams, querystring: listQuery(BASE_SORT),
      response: responses(200, PageEnvelope(Organization)),
    },
  }, async (request) => {
    const { vendorId } = request.params;
    const own = request.principal?.kind === 'token' ? request.principal.organizationId : null;
    let query = kysely.selectFrom('organizations').selectAll().where('vendor_id', '=', vendorId);
    // A token narrowed to one organization sees that one only.
    if (own) query = query.where('id', '=', own);
    const page = await fetchPage(query, request.query, BASE_SORT, own ? 1 : () => readCounter(kysely, orgCounter(vendorId)));
    return pageBody(request, { ...page, items: page.items.map(toOrganization) });
  });

};

/** One organization: registered under the organization scope (its own path is the scope's prefix). */
export const organizationRoutes: FastifyPluginAsyncTypebox<{ dependents: readonly OrganizationDependent[] }> = async (app, { dependents }) => {
  const { kysely } = app.ctx.db;
  const now = () => app.ctx.clock.now().toISOString();

  app.get('', {
    config: read,
    schema: { tags, summary: 'Get an organization', params: OrgParams, response: responses(200, Envelope(Organization)) },
  }, async (request) => {
    const row = await findOrganization(kysely, request.params.vendorId, request.params.organizationId);
    if (!row) throw notFound('Organization');
    return envelope(request, toOrganization(row));
  });

  app.put('', {
    config: write,
    schema: { tags, summary: 'Update an organization', params: OrgParams, body: OrganizationWrite, response: responses(200, EmptyEnvelope) },
  }, async (request) => {
    const { vendorId, organizationId } = request.params;
    await kysely
      .updateTable('organizations')
      .set({ name: request.body.name, updated_at: now() })
      .where('vendor_id', '=', vendorId)
      .where('id', '=', organizationId)
      .execute();
    return envelope(request, null, 'Updated');
  });

  app.delete('', {
    config: write,
    schema: {
      tags, summary: 'Delete an organization (it must hold no resources); its API tokens go with it',
      params: OrgParams, response: responses(200, EmptyEnvelope, [409]),
    },
  }, async (request) => {
    const { vendorId, organizationId } = request.params;
    await kysely.transaction().execute(async (trx) => {
      for (const dep of dependents) {
        const found = await trx
          .selectFrom(dep.table)
          .select(sql`1`.as('one'))
          .where(sql.ref('organization_id'), '=', organizationId)
          .executeTakeFirst();
        if (found) throw conflict(`Organization still has ${dep.label}; delete them first`);
      }
      const tokens = await trx.deleteFrom('api_tokens').where('organization_id', '=', organizationId).executeTakeFirst();
      const counters = tokenCounters(vendorId, organizationId);
      await bumpCounter(trx, counters.vendor, -Number(tokens.numDeletedRows));
      await trx.deleteFrom('counters').where('key', '=', counters.organization).execute();
      await trx.deleteFrom('organizations').where('id', '=', organizationId).execute();
      await bumpAuthEpoch(trx);
      await bumpCounter(trx, orgCounter(vendorId), -1);
    });
    return envelope(request, null, 'Deleted');
  });
};
