import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope, PageEnvelope, envelope, responses } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams } from '../../http/schemas.ts';
import { DELIVERY_SORT, findDelivery, listAttempts, listDeliveries, toDelivery } from './deliveries.repository.ts';
import { DeliveryFilters, DeliveryParams, WebhookDelivery, WebhookDeliveryDetail } from './deliveries.schemas.ts';
import { redeliver } from './deliveries.service.ts';

const tags = ['Webhook deliveries'];
const BASE = '/webhook-deliveries';
const read = { auth: { scope: 'organization', permission: 'calls:read' } } as const;
const write = { auth: { scope: 'organization', permission: 'calls:write' } } as const;
const ListQuery = listQuery(DELIVERY_SORT, DeliveryFilters, 'createdAt,desc');

/** The delivery log of call event hooks: what was sent where, every attempt's answer, and redelivery. */
export const deliveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { kysely } = app.ctx.db;
  const { clock } = app.ctx;

  app.get(BASE, {
    config: read,
    schema: {
      tags, operationId: 'listWebhookDeliveries', summary: 'List webhook deliveries (filter by status, hookId, eventType, callId); newest first by default',
      params: OrgParams, querystring: ListQuery, response: responses(200, PageEnvelope(WebhookDelivery)),
    },
  }, async (request) => {
    const { status, hookId, eventType, callId, ...page } = request.query;
    return pageBody(request, await listDeliveries(kysely, request.params.organizationId, { status, hookId, eventType, callId }, page, clock.now()));
  });

  app.get(`${BASE}/:deliveryId`, {
    config: read,
    schema: { tags, operationId: 'getWebhookDelivery', summary: 'Get a webhook delivery with its attempts', params: DeliveryParams, response: responses(200, Envelope(WebhookDeliveryDetail)) },
  }, async (request) => {
    const { organizationId, deliveryId } = request.params;
    const row = await findDelivery(kysely, organizationId, deliveryId);
    if (!row) throw notFound('Webhook delivery');
    return envelope(request, { ...toDelivery(row, clock.now()), attempts: await listAttempts(kysely, row.id) });
  });

  app.post(`${BASE}/:deliveryId/redeliver`, {
    config: write,
    schema: {
      tags, operationId: 'redeliverWebhookDelivery', summary: 'Send a delivery again now, with the same webhook-id (409 while an attempt is in flight)',
      params: DeliveryParams, response: responses(200, Envelope(WebhookDelivery), [409]),
    },
  }, async (request) => {
    const now = clock.now();
    const row = await redeliver(kysely, request.params.organizationId, request.params.deliveryId, now);
    return envelope(request, toDelivery(row, now), 'Redelivery scheduled');
  });
};
