import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Envelope, envelope, responses } from '../../http/envelope.ts';
import { OrgParams } from '../../http/schemas.ts';
import { AnalyticsOverview, MAX_RANGE_DAYS, OverviewQuery } from './analytics.schemas.ts';
import { analyticsOverview, resolveRange } from './analytics.service.ts';

/** The numbers the console's overview draws, computed by the database over one organization. */
export const analyticsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, clock } = app.ctx;

  app.get('/analytics/overview', {
    config: { auth: { scope: 'organization', permission: 'calls:read' } },
    schema: {
      tags: ['Analytics'],
      operationId: 'getAnalyticsOverview', summary: 'Calls per day by outcome, turn latency percentiles, tool error rate and tasks by status',
      description: `Over [from, to) (default: the last 30 days), at most ${MAX_RANGE_DAYS} days; days are UTC days. ` +
        'A call counts on the day it ended; the task counts are the current ones.',
      params: OrgParams, querystring: OverviewQuery, response: responses(200, Envelope(AnalyticsOverview)),
    },
  }, async (request) => {
    const range = resolveRange(request.query, clock.now());
    return envelope(request, await analyticsOverview(db, request.params.organizationId, range));
  });
};
