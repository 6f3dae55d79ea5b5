import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Envelope, PageEnvelope, envelope, responses, sendCreated } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { listQuery, pageBody } from '../../http/pagination.ts';
import { Uuid, orgPath } from '../../http/schemas.ts';
import { findAssistant } from './assistants.repository.ts';
import { authorOf, type AssistantRouteOptions } from './assistants.routes.ts';
import { findVersion, listVersions, toVersion, VERSION_SORT } from './versions.repository.ts';
import { AssistantVersion, AssistantVersionSummary, VersionNumber } from './versions.schemas.ts';
import { restoreVersion } from './versions.service.ts';

/** The versions of assistants and agents (docs/versions.md): one set of routes, registered once per kind. */
export const versionRoutes: FastifyPluginAsyncTypebox<AssistantRouteOptions> = async (app, { kind, deps }) => {
  const plural = kind === 'agent' ? 'agents' : 'assistants';
  const Title = kind === 'agent' ? 'Agent' : 'Assistant';
  const a = kind === 'agent' ? 'an agent' : 'an assistant';
  const idParam = `${kind}Id`;
  const BASE = `/${plural}/:${idParam}/versions`;
  const ItemParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, [idParam]: Uuid });
  const VersionParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, [idParam]: Uuid, version: VersionNumber });
  const tags = [kind === 'agent' ? 'Agents' : 'Assistants'];
  const read = { auth: { scope: 'organization', permission: `${plural}:read` } } as const;
  const write = { auth: { scope: 'organization', permission: `${plural}:write` } } as const;
  const { kysely } = app.ctx.db;
  // The id parameter's name depends on the kind, so TypeBox types the params as a record.
  const ids = (params: Record<string, unknown>) => ({
    vendorId: String(params.vendorId), organizationId: String(params.organizationId), id: String(params[idParam]), version: Number(params.version),
  });
  const owner = async (organizationId: string, id: string) => {
    const row = await findAssistant(kysely, kind, organizationId, id);
    if (!row) throw notFound(Title);
    return row;
  };

  app.get(BASE, {
    config: read,
    schema: {
      tags, operationId: `list${Title}Versions`, summary: `List the versions of ${a}, newest first`,
      description: 'One per change (create, PUT, PATCH, restore): its number, when, the token that made it and what it changed.',
      params: ItemParams, querystring: listQuery(VERSION_SORT, {}, 'number,desc'), response: responses(200, PageEnvelope(AssistantVersionSummary)),
    },
  }, async (request) => {
    const { organizationId, id } = ids(request.params);
    await owner(organizationId, id);
    return pageBody(request, await listVersions(kysely, organizationId, id, request.query));
  });

  app.get(`${BASE}/:version`, {
    config: read,
    schema: {
      tags, operationId: `get${Title}Version`, summary: `Get a version of ${a}: the whole configuration as it was`,
      params: VersionParams, response: responses(200, Envelope(AssistantVersion)),
    },
  }, async (request) => {
    const { organizationId, id, version: number } = ids(request.params);
    const row = await owner(organizationId, id);
    const version = await findVersion(kysely, organizationId, id, number);
    if (!version) throw notFound(`Version ${number} of this ${kind}`);
    return envelope(request, toVersion(row, version));
  });

  const Restored = Envelope(AssistantVersion);
  app.post(`${BASE}/:version/restore`, {
    config: write,
    schema: {
      tags, operationId: `restore${Title}Version`, summary: `Restore a version of ${a}`,
      description: 'Makes a new version equal to this one, secrets as they were in it (201, Location names the new version). ' +
        'When the configuration already is that version\'s, nothing changes and no version is made (200, the current version). ' +
        'A version naming a strategy or SIP number that no longer exists is a 409 naming the field.',
      params: VersionParams,
      response: {
        ...responses(200, Restored, [409], 'Nothing to restore: the current version, which already has that configuration'),
        201: { ...Restored, description: 'Created: the new version, equal to the restored one; Location names it' },
      },
    },
  }, async (request, reply) => {
    const params = ids(request.params);
    const { made, version } = await restoreVersion(deps, kind, params.organizationId, params.id, params.version, authorOf(request));
    if (!made) return envelope(request, version, `Already the configuration of version ${params.version}; no version made`);
    return sendCreated(request, reply, `${orgPath(params)}/${plural}/${params.id}/versions/${version.number}`, version);
  });
};
