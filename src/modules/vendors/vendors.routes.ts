import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import { bumpAuthEpoch } from '../../http/auth-cache.ts';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { conflict, notFound } from '../../http/errors.ts';
import { BASE_SORT, fetchPage, listQuery, pageBody } from '../../http/pagination.ts';
import { VendorParams } from '../../http/schemas.ts';
import { VENDORS_COUNTER, findVendor, toVendor } from './vendors.repository.ts';
import { Vendor, VendorWrite } from './vendors.schemas.ts';

const admin = { auth: { scope: 'admin' } } as const;
const tags = ['Vendors'];

/** Vendors are the platform's top level, managed by the platform admin only. */
export const vendorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { kysely } = app.ctx.db;
  const now = () => app.ctx.clock.now().toISOString();

  app.post('/api/v1/vendors', {
    config: { ...admin, idempotent: true },
    schema: { tags, summary: 'Create a vendor', body: VendorWrite, response: responses(201, Envelope(Vendor)) },
  }, async (request, reply) => {
    const at = now();
    const row = { id: crypto.randomUUID(), name: request.body.name, created_at: at, updated_at: at };
    await kysely.transaction().execute(async (trx) => {
      await trx.insertInto('vendors').values(row).execute();
      await bumpCounter(trx, VENDORS_COUNTER, 1);
    });
    return sendCreated(request, reply, `/api/v1/vendors/${row.id}`, toVendor(row));
  });

  app.get('/api/v1/vendors', {
    config: admin,
    schema: { tags, summary: 'List vendors', querystring: listQuery(BASE_SORT), response: responses(200, PageEnvelope(Vendor)) },
  }, async (request) => {
    const page = await fetchPage(kysely.selectFrom('vendors').selectAll(), request.query, BASE_SORT, () =>
      readCounter(kysely, VENDORS_COUNTER),
    );
    return pageBody(request, { ...page, items: page.items.map(toVendor) });
  });

  app.get('/api/v1/vendors/:vendorId', {
    config: admin,
    schema: { tags, summary: 'Get a vendor', params: VendorParams, response: responses(200, Envelope(Vendor)) },
  }, async (request) => {
    const row = await findVendor(kysely, request.params.vendorId);
    if (!row) throw notFound('Vendor');
    return envelope(request, toVendor(row));
  });

  app.put('/api/v1/vendors/:vendorId', {
    config: admin,
    schema: { tags, summary: 'Update a vendor', params: VendorParams, body: VendorWrite, response: responses(200, EmptyEnvelope) },
  }, async (request) => {
    const result = await kysely
      .updateTable('vendors')
      .set({ name: request.body.name, updated_at: now() })
      .where('id', '=', request.params.vendorId)
      .executeTakeFirst();
    if (!result.numUpdatedRows) throw notFound('Vendor');
    return envelope(request, null, 'Updated');
  });

  app.delete('/api/v1/vendors/:vendorId', {
    config: admin,
    schema: {
      tags, summary: 'Delete a vendor (it must have no organizations)', params: VendorParams,
      response: responses(200, EmptyEnvelope, [409]),
    },
  }, async (request) => {
    const { vendorId } = request.params;
    await kysely.transaction().execute(async (trx) => {
      if (!(await findVendor(trx, vendorId))) throw notFound('Vendor');
      const org = await trx.selectFrom('organizations').select('id').where('vendor_id', '=', vendorId).executeTakeFirst();
      if (org) throw conflict('Vendor still has organizations; delete them first');
      await trx.deleteFrom('vendors').where('id', '=', vendorId).execute();
      await bumpAuthEpoch(trx);
      await bumpCounter(trx, VENDORS_COUNTER, -1);
    });
    return envelope(request, null, 'Deleted');
  });
};
