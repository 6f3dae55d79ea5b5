import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { readCounter } from '../../db/counters.ts';
import { prepared } from '../../db/prepared.ts';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, responses, sendCreated, sendJsonEnvelope } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { BASE_SORT, fetchPage, listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams, Uuid, orgPath } from '../../http/schemas.ts';
import { assistantCounter, createReadCache, etagOf, toAssistant, type Kind } from './assistants.repository.ts';
import { Assistant, AssistantCreate, AssistantUpdate } from './assistants.schemas.ts';
import { createAssistant, deleteAssistant, updateAssistant, type AssistantDeps } from './assistants.service.ts';
import { countNameMatches, NameQuery, whereNameStartsWith } from './name-search.ts';

export interface AssistantRouteOptions {
  kind: Kind;
  deps: AssistantDeps;
}

const IfMatch = Type.Object({ 'if-match': Type.Optional(Type.String({ description: 'ETag from a GET; a stale one is a 412' })) });

/** Assistants and agents: one set of routes, registered once per kind. */
export const assistantRoutes: FastifyPluginAsyncTypebox<AssistantRouteOptions> = async (app, { kind, deps }) => {
  const plural = kind === 'agent' ? 'agents' : 'assistants';
  const Title = kind === 'agent' ? 'Agent' : 'Assistant';
  const idParam = `${kind}Id`;
  const BASE = `/${plural}`;
  const ITEM = `${BASE}/:${idParam}`;
  const ItemParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, [idParam]: Uuid });
  const tags = [kind === 'agent' ? 'Agents' : 'Assistants'];
  const read = { auth: { scope: 'organization', permission: `${plural}:read` } } as const;
  const write = { auth: { scope: 'organization', permission: `${plural}:write` } } as const;
  const { db } = app.ctx;
  const { kysely } = db;
  const assistantJsonCached = createReadCache();
  const findOne = prepared(db, (organizationId: string, id: string) =>
    kysely.selectFrom('assistants').selectAll().where('organization_id', '=', organizationId).where('kind', '=', kind).where('id', '=', id),
  );
  // The id parameter's name depends on the kind, so TypeBox types the params as a record.
  const ids = (params: Record<string, string | undefined>) => ({ organizationId: params.organizationId ?? '', id: params[idParam] ?? '' });

  app.post(BASE, {
    config: { ...write, idempotent: true },
    schema: {
      tags, summary: `Create ${kind === 'agent' ? 'an agent' : 'an assistant'}`,
      description: 'Answers the full resource with the ids assigned to each extension and call event hook.',
      params: OrgParams, body: AssistantCreate, response: responses(201, Envelope(Assistant), [409]),
    },
  }, async (request, reply) => {
    const row = await createAssistant(deps, kind, request.params.organizationId, request.body);
    reply.header('etag', etagOf(row));
    return sendCreated(request, reply, `${orgPath(request.params)}/${plural}/${row.id}`, toAssistant(row));
  });

  app.get(BASE, {
    config: read,
    schema: {
      tags, summary: `List ${plural} (q: names starting with)`, params: OrgParams,
      querystring: listQuery(BASE_SORT, { q: NameQuery }), response: responses(200, PageEnvelope(Assistant)),
    },
  }, async (request) => {
    const { organizationId } = request.params;
    const { q, ...pageQuery } = request.query as typeof request.query & { q?: string };
    let scoped = kysely.selectFrom('assistants').where('organization_id', '=', organizationId).where('kind', '=', kind);
    if (q) scoped = whereNameStartsWith(scoped, q);
    const total = q ? () => countNameMatches(scoped) : () => readCounter(kysely, assistantCounter(kind, organizationId));
    const page = await fetchPage(scoped.selectAll(), pageQuery, BASE_SORT, total);
    return pageBody(request, { ...page, items: page.items.map(toAssistant) });
  });

  app.get(ITEM, {
    config: read,
    schema: { tags, summary: `Get ${kind === 'agent' ? 'an agent' : 'an assistant'}`, params: ItemParams, response: responses(200, Envelope(Assistant)) },
  }, async (request, reply) => {
    const { organizationId, id } = ids(request.params);
    const row = await findOne(organizationId, id);
    if (!row) throw notFound(Title);
    reply.header('etag', etagOf(row));
    return sendJsonEnvelope(request, reply, assistantJsonCached(row));
  });

  app.put(ITEM, {
    config: write,
    schema: {
      tags, summary: `Update ${kind === 'agent' ? 'an agent' : 'an assistant'}`,
      operationId: kind === 'agent' ? 'updateAgent' : 'updateAssistant',
      description:
        'Extensions and call event hooks: an item with an existing id is updated, one with a null or missing id is created, ' +
        'and an existing item left out is removed. Write-only values sent back as ******** keep what is stored.',
      params: ItemParams, headers: IfMatch, body: AssistantUpdate, response: responses(200, EmptyEnvelope, [409, 412]),
    },
  }, async (request) => {
    const { organizationId, id } = ids(request.params);
    await updateAssistant(deps, kind, organizationId, id, request.body, request.headers['if-match']);
    return envelope(request, null, 'Updated');
  });

  app.delete(ITEM, {
    config: write,
    schema: { tags, summary: `Delete ${kind === 'agent' ? 'an agent' : 'an assistant'}`, params: ItemParams, response: responses(200, EmptyEnvelope, [409]) },
  }, async (request) => {
    const { organizationId, id } = ids(request.params);
    await deleteAssistant(deps, kind, organizationId, id);
    return envelope(request, null, 'Deleted');
  });
};
