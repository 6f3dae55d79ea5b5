import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { LRUCache } from 'lru-cache';
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EmptyEnvelope, Envelope, PageEnvelope, envelope, flatJson, responses, sendCreated, sendEnvelopeJson } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { BASE_SORT, listQuery, pageBody } from '../../http/pagination.ts';
import { OrgParams, Uuid, orgPath } from '../../http/schemas.ts';
import { updateRoutes } from '../../http/updates.ts';
import { etagOf, listAssistants, preparedFind, toAssistant, type Kind } from './assistants.repository.ts';
import { Assistant, AssistantCreate, AssistantUpdate } from './assistants.schemas.ts';
import { createAssistant, deleteAssistant, updateAssistant, type AssistantDeps, type Author } from './assistants.service.ts';
import { NameQuery } from './name-search.ts';

export interface AssistantRouteOptions {
  kind: Kind;
  deps: AssistantDeps;
}

/** What the serialised reads kept per app and kind may hold, in characters. */
const SHOWN_BYTES = 8 * 1024 * 1024;

/** A kept read of one row (see the GET route). */
interface Shown {
  /** The change mark it was read under; undefined where the database has none (read every time). */
  mark: number | undefined;
  version: string;
  etag: string;
  data: string;
}

/** Sends a kept read (a function of its own: a closure made per request costs, see docs/performance.md). */
function sendShown(request: FastifyRequest, reply: FastifyReply, entry: Shown) {
  reply.header('etag', entry.etag);
  sendEnvelopeJson(request, reply, entry.data);
}

/** Who a change is made by, for its version: the request's API token, or null for the platform admin. */
export const authorOf = (request: FastifyRequest): Author => (request.principal?.kind === 'token' ? { tokenId: request.principal.tokenId } : null);

const IfMatch = Type.Object({ 'if-match': Type.Optional(Type.String({ description: 'ETag from a GET; a stale one is a 412' })) });

/** Assistants and agents: one set of routes, registered once per kind. */
export const assistantRoutes: FastifyPluginAsyncTypebox<AssistantRouteOptions> = async (app, { kind, deps }) => {
  const plural = kind === 'agent' ? 'agents' : 'assistants';
  const Title = kind === 'agent' ? 'Agent' : 'Assistant';
  // One shape, named after the kind in /openapi.json (Agent, AgentCreate, AgentEnvelope…).
  const Read = Type.Object(Assistant.properties, { title: Title });
  const Create = { ...AssistantCreate, title: `${Title}Create` };
  /** The read shape as Fastify's serializer compiler takes it (compiled once, kept by object). */
  const readSchema: Record<string, unknown> = { ...Read };
  const idParam = `${kind}Id`;
  const BASE = `/${plural}`;
  const ITEM = `${BASE}/:${idParam}`;
  const ItemParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, [idParam]: Uuid });
  const tags = [kind === 'agent' ? 'Agents' : 'Assistants'];
  const read = { auth: { scope: 'organization', permission: `${plural}:read` } } as const;
  const write = { auth: { scope: 'organization', permission: `${plural}:write` } } as const;
  const { db } = app.ctx;
  const { kysely } = db;
  const findOne = preparedFind(db, kind);
  // The id parameter's name depends on the kind, so TypeBox types the params as a record.
  const ids = (params: Record<string, string | undefined>) => ({ organizationId: params.organizationId ?? '', id: params[idParam] ?? '' });
  // The read shape of a row as the response schema serialises it, with its ETag, kept per
  // organization and id: given again without a read while the database's change mark is the one
  // it was read under (no commit by anyone since, see Db.changeMark), and without serialising
  // again while the row's version is the same. Bounded by size; one per app and kind.
  const shown = new LRUCache<string, Shown>({ maxSize: SHOWN_BYTES, sizeCalculation: (entry) => entry.data.length + entry.etag.length + 64 });

  app.post(BASE, {
    config: { ...write, idempotent: true },
    schema: {
      tags, operationId: `create${Title}`, summary: `Create ${kind === 'agent' ? 'an agent' : 'an assistant'}`,
      description: 'Answers the full resource with the ids assigned to each extension and call event hook.',
      params: OrgParams, body: Create, response: responses(201, Envelope(Read), [409]),
    },
  }, async (request, reply) => {
    const row = await createAssistant(deps, kind, request.params.organizationId, request.body, authorOf(request));
    reply.header('etag', etagOf(row));
    return sendCreated(request, reply, `${orgPath(request.params)}/${plural}/${row.id}`, toAssistant(row));
  });

  app.get(BASE, {
    config: read,
    schema: {
      tags, operationId: `list${Title}s`, summary: `List ${plural} (q: names starting with)`, params: OrgParams,
      querystring: listQuery(BASE_SORT, { q: NameQuery }), response: responses(200, PageEnvelope(Read)),
    },
  }, async (request) => {
    const { q, ...pageQuery } = request.query;
    return pageBody(request, await listAssistants(kysely, kind, request.params.organizationId, pageQuery, q));
  });

  app.get(ITEM, {
    config: read,
    schema: { tags, operationId: `get${Title}`, summary: `Get ${kind === 'agent' ? 'an agent' : 'an assistant'}`, params: ItemParams, response: responses(200, Envelope(Read)) },
  }, (request, reply) => {
    const { organizationId, id } = ids(request.params);
    const mark = request.changeMark ?? db.changeMark?.();
    const key = `${organizationId}:${id}`;
    const kept = shown.get(key);
    // Not async: a kept read is sent without a promise (docs/performance.md).
    if (kept !== undefined && mark !== undefined && kept.mark === mark) return sendShown(request, reply, kept);
    return findOne(organizationId, id).then((row) => {
      if (!row) throw notFound(Title);
      // The version changes with every write; updated_at too, should a row ever be written back.
      const version = `${row.version}:${row.updated_at}`;
      const entry = kept?.version === version
        ? { ...kept, mark }
        : { mark, version, etag: etagOf(row), data: flatJson(reply.compileSerializationSchema(readSchema)(toAssistant(row))) };
      shown.set(key, entry);
      sendShown(request, reply, entry);
    });
  });

  updateRoutes(app, {
    url: ITEM, params: ItemParams, headers: IfMatch, config: write, tags, what: kind === 'agent' ? 'an agent' : 'an assistant',
    read: Read, write: AssistantUpdate, errors: [409, 412], resource: Title,
    description:
      'Extensions and call event hooks: an item with an existing id is updated, one with a null or missing id is created, ' +
      'and an existing item left out is removed. Write-only values sent back as ******** keep what is stored. ' +
      'A change makes the next version (…/versions); an update that changes nothing writes nothing (no version, the same ETag).',
    update: async ({ params, headers, edit, request }) => {
      const { organizationId, id } = ids(params);
      await updateAssistant(deps, kind, organizationId, id, edit, headers['if-match'] as string | undefined, authorOf(request));
    },
  });

  app.delete(ITEM, {
    config: write,
    schema: { tags, operationId: `delete${Title}`, summary: `Delete ${kind === 'agent' ? 'an agent' : 'an assistant'}`, params: ItemParams, response: responses(200, EmptyEnvelope, [409]) },
  }, async (request) => {
    const { organizationId, id } = ids(request.params);
    await deleteAssistant(deps, kind, organizationId, id);
    return envelope(request, null, 'Deleted');
  });
};
