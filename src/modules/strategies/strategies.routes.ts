import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { conflict, notFound } from '../../http/errors.ts';
import { BASE_SORT, fetchPage, listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams, orgPath } from '../../http/schemas.ts';
import { findStrategy, strategyCounter, toStrategy } from './strategies.repository.ts';
import { Strategy, StrategyParams, StrategyWrite } from './strategies.schemas.ts';

const tags = ['LLM generation strategies'];
const BASE = '/llm-generation-strategies';
const read = { auth: { scope: 'organization', permission: 'strategies:read' } } as const;
const write = { auth: { scope: 'organization', permission: 'strategies:write' } } as const;
const SORT = { ...BASE_SORT, type: 'type' };

export const strategyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { kysely } = app.ctx.db;
  const now = () => app.ctx.clock.now().toISOString();

  app.post(BASE, {
    config: { ...write, idempotent: true },
    schema: { tags, summary: 'Create an LLM generation strategy', params: OrgParams, body: StrategyWrite, response: responses(201, Envelope(Strategy)) },
  }, async (request, reply) => {
    const { organizationId } = request.params;
    const at = now();
    const row = {
      id: crypto.randomUUID(),
      organization_id: organizationId,
      name: request.body.name,
      type: request.body.type,
      parameters: JSON.stringify(request.body.parameters),
      created_at: at,
      updated_at: at,
    };
    await kysely.transaction().execute(async (trx) => {
      await trx.insertInto('llm_strategies').values(row).execute();
      await bumpCounter(trx, strategyCounter(organizationId), 1);
    });
    return sendCreated(request, reply, `${orgPath(request.params)}/llm-generation-strategies/${row.id}`, toStrategy(row));
  });

  app.get(BASE, {
    config: read,
    schema: { tags, summary: 'List LLM generation strategies', params: OrgParams, querystring: listQuery(SORT), response: responses(200, PageEnvelope(Strategy)) },
  }, async (request) => {
    const { organizationId } = request.params;
    const query = kysely.selectFrom('llm_strategies').selectAll().where('organization_id', '=', organizationId);
    const page = await fetchPage(query, request.query, SORT, () => readCounter(kysely, strategyCounter(organizationId)));
    return pageBody(request, { ...page, items: page.items.map(toStrategy) });
  });

  app.get(`${BASE}/:strategyId`, {
    config: read,
    schema: { tags, summary: 'Get an LLM generation strategy', params: StrategyParams, response: responses(200, Envelope(Strategy)) },
  }, async (request) => {
    const row = await findStrategy(kysely, request.params.organizationId, request.params.strategyId);
    if (!row) throw notFound('LLM generation strategy');
    return envelope(request, toStrategy(row));
  });

  app.put(`${BASE}/:strategyId`, {
    config: write,
    schema: { tags, summary: 'Replace an LLM generation strategy', params: StrategyParams, body: StrategyWrite, response: responses(200, EmptyEnvelope) },
  }, async (request) => {
    const { organizationId, strategyId } = request.params;
    const result = await kysely
      .updateTable('llm_strategies')
      .set({ name: request.body.name, type: request.body.type, parameters: JSON.stringify(request.body.parameters), updated_at: now() })
      .where('organization_id', '=', organizationId)
      .where('id', '=', strategyId)
      .executeTakeFirst();
    if (!result.numUpdatedRows) throw notFound('LLM generation strategy');
    return envelope(request, null, 'Updated');
  });

  app.delete(`${BASE}/:strategyId`, {
    config: write,
    schema: {
      tags, summary: 'Delete an LLM generation strategy (409 while an assistant or agent uses it)',
      params: StrategyParams, response: responses(200, EmptyEnvelope, [409]),
    },
  }, async (request) => {
    const { organizationId, strategyId } = request.params;
    await kysely.transaction().execute(async (trx) => {
      if (!(await findStrategy(trx, organizationId, strategyId))) throw notFound('LLM generation strategy');
      const user = await trx.selectFrom('assistants').select(['kind', 'name']).where('strategy_id', '=', strategyId).executeTakeFirst();
      if (user) throw conflict(`The ${user.kind} "${user.name}" uses this strategy`);
      await trx.deleteFrom('llm_strategies').where('id', '=', strategyId).execute();
      await bumpCounter(trx, strategyCounter(organizationId), -1);
    });
    return envelope(request, null, 'Deleted');
  });
};
