import { data, ok, type Api } from '../api/client';
import type { Kind, Scope, Version, VersionPage } from '../api/types';

const ORG = '/api/v1/vendors/{vendorId}/organizations/{organizationId}';

/** A page of an assistant's or agent's versions, newest first. */
export function listVersions(api: Api, scope: Scope, kind: Kind, id: string, page: number, size: number): Promise<VersionPage> {
  const query = { page, size };
  return kind === 'agent'
    ? ok(api.GET(`${ORG}/agents/{agentId}/versions`, { params: { path: { ...scope, agentId: id }, query } }))
    : ok(api.GET(`${ORG}/assistants/{assistantId}/versions`, { params: { path: { ...scope, assistantId: id }, query } }));
}

/** One version with its whole configuration. */
export function getVersion(api: Api, scope: Scope, kind: Kind, id: string, version: number): Promise<Version> {
  return kind === 'agent'
    ? data(api.GET(`${ORG}/agents/{agentId}/versions/{version}`, { params: { path: { ...scope, agentId: id, version } } }))
    : data(api.GET(`${ORG}/assistants/{assistantId}/versions/{version}`, { params: { path: { ...scope, assistantId: id, version } } }));
}

/** Restores a version: the version the assistant now is, and whether the restore made it (false: it already had that configuration). */
export async function restoreVersion(api: Api, scope: Scope, kind: Kind, id: string, version: number): Promise<{ made: boolean; version: Version }> {
  const call = kind === 'agent'
    ? api.POST(`${ORG}/agents/{agentId}/versions/{version}/restore`, { params: { path: { ...scope, agentId: id, version } } })
    : api.POST(`${ORG}/assistants/{assistantId}/versions/{version}/restore`, { params: { path: { ...scope, assistantId: id, version } } });
  const { response } = await call;
  return { made: response.status === 201, version: await data(call) };
}
