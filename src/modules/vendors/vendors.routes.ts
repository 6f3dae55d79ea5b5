import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { BASE_SORT, listQuery, pageBody } from '../../http/pagination.ts';
import { VendorParams } from '../../http/schemas.ts';
import { updateRoutes } from '../../http/updates.ts';
import { listVendors } from './vendors.repository.ts';
import { Vendor, VendorWrite } from './vendors.schemas.ts';
import { createVendor, deleteVendor, getVendor, updateVendor } from './vendors.service.ts';

const admin = { auth: { scope: 'admin' } } as const;
const tags = ['Vendors'];
const ITEM = '/api/v1/vendors/:vendorId';

/** Vendors are the platform's top level, managed by the platform admin only. */
export const vendorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.post('/api/v1/vendors', {
    config: { ...admin, idempotent: true },
    schema: { tags, operationId: 'createVendor', summary: 'Create a vendor', body: VendorWrite, response: responses(201, Envelope(Vendor)) },
  }, async (request, reply) => {
    const vendor = await createVendor(ctx, request.body);
    return sendCreated(request, reply, `/api/v1/vendors/${vendor.id}`, vendor);
  });

  app.get('/api/v1/vendors', {
    config: admin,
    schema: { tags, operationId: 'listVendors', summary: 'List vendors', querystring: listQuery(BASE_SORT), response: responses(200, PageEnvelope(Vendor)) },
  }, async (request) => pageBody(request, await listVendors(ctx.db.kysely, request.query)));

  app.get(ITEM, {
    config: admin,
    schema: { tags, operationId: 'getVendor', summary: 'Get a vendor', params: VendorParams, response: responses(200, Envelope(Vendor)) },
  }, async (request) => envelope(request, await getVendor(ctx, request.params.vendorId)));

  updateRoutes(app, {
    resource: 'Vendor',
    url: ITEM, params: VendorParams, config: admin, tags, what: 'a vendor', read: Vendor, write: VendorWrite,
    update: ({ params, edit }) => updateVendor(ctx, params.vendorId, edit),
  });

  app.delete(ITEM, {
    config: admin,
    schema: {
      tags, operationId: 'deleteVendor', summary: 'Delete a vendor (it must have no organizations)', params: VendorParams,
      response: responses(200, EmptyEnvelope, [409]),
    },
  }, async (request) => {
    await deleteVendor(ctx, request.params.vendorId);
    return envelope(request, null, 'Deleted');
  });
};
