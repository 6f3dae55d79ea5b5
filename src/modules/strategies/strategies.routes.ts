import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams, orgPath } from '../../http/schemas.ts';
import { updateRoutes } from '../../http/updates.ts';
import { STRATEGY_SORT, listStrategies } from './strategies.repository.ts';
import { Strategy, StrategyParams, StrategyWrite } from './strategies.schemas.ts';
import { createStrategy, deleteStrategy, getStrategy, updateStrategy } from './strategies.service.ts';

const tags = ['LLM generation strategies'];
const BASE = '/llm-generation-strategies';
const ITEM = `${BASE}/:strategyId`;
const read = { auth: { scope: 'organization', permission: 'strategies:read' } } as const;
const write = { auth: { scope: 'organization', permission: 'strategies:write' } } as const;

export const strategyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { ctx } = app;

  app.post(BASE, {
    config: { ...write, idempotent: true },
    schema: { tags, operationId: 'createLlmGenerationStrategy', summary: 'Create an LLM generation strategy', params: OrgParams, body: StrategyWrite, response: responses(201, Envelope(Strategy)) },
  }, async (request, reply) => {
    const strategy = await createStrategy(ctx, request.params.organizationId, request.body);
    return sendCreated(request, reply, `${orgPath(request.params)}${BASE}/${strategy.id}`, strategy);
  });

  app.get(BASE, {
    config: read,
    schema: { tags, operationId: 'listLlmGenerationStrategies', summary: 'List LLM generation strategies', params: OrgParams, querystring: listQuery(STRATEGY_SORT), response: responses(200, PageEnvelope(Strategy)) },
  }, async (request) => pageBody(request, await listStrategies(ctx.db.kysely, request.params.organizationId, request.query)));

  app.get(ITEM, {
    config: read,
    schema: { tags, operationId: 'getLlmGenerationStrategy', summary: 'Get an LLM generation strategy', params: StrategyParams, response: responses(200, Envelope(Strategy)) },
  }, async (request) => envelope(request, await getStrategy(ctx, request.params.organizationId, request.params.strategyId)));

  updateRoutes(app, {
    resource: 'LlmGenerationStrategy',
    url: ITEM, params: StrategyParams, config: write, tags, what: 'an LLM generation strategy', read: Strategy, write: StrategyWrite,
    update: ({ params, edit }) => updateStrategy(ctx, params.organizationId, params.strategyId, edit),
  });

  app.delete(ITEM, {
    config: write,
    schema: {
      tags, operationId: 'deleteLlmGenerationStrategy', summary: 'Delete an LLM generation strategy (409 while an assistant or agent uses it)',
      params: StrategyParams, response: responses(200, EmptyEnvelope, [409]),
    },
  }, async (request) => {
    await deleteStrategy(ctx, request.params.organizationId, request.params.strategyId);
    return envelope(request, null, 'Deleted');
  });
};
