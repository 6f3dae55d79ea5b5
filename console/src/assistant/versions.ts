import { ApiError, inOrganization, type Api } from '../api/client';
import type { Kind, Scope, Version, VersionPage } from '../api/types';

const ORG = '/api/v1/vendors/{vendorId}/organizations/{organizationId}';

/** A page of an assistant's or agent's versions, newest first. */
export function listVersions(api: Api, scope: Scope, kind: Kind, id: string, page: number, size: number): Promise<VersionPage> {
  const query = { page, size };
  const org = inOrganization(api, scope);
  return kind === 'agent' ? org.listAgentVersions({ path: { agentId: id }, query }) : org.listAssistantVersions({ path: { assistantId: id }, query });
}

/** One version with its whole configuration. */
export function getVersion(api: Api, scope: Scope, kind: Kind, id: string, version: number): Promise<Version> {
  const org = inOrganization(api, scope);
  return kind === 'agent' ? org.getAgentVersion({ path: { agentId: id, version } }) : org.getAssistantVersion({ path: { assistantId: id, version } });
}

/**
 * Restores a version: the version the assistant now is, and whether the restore made it (false:
 * it already had that configuration). The status tells which (201 or 200), so this one call goes
 * through the SDK's raw client, which keeps the response.
 */
export async function restoreVersion(api: Api, scope: Scope, kind: Kind, id: string, version: number): Promise<{ made: boolean; version: Version }> {
  const { data, error, response } = kind === 'agent'
    ? await api.raw.POST(`${ORG}/agents/{agentId}/versions/{version}/restore`, { params: { path: { ...scope, agentId: id, version } } })
    : await api.raw.POST(`${ORG}/assistants/{assistantId}/versions/{version}/restore`, { params: { path: { ...scope, assistantId: id, version } } });
  if (!data) throw ApiError.of(response, error);
  return { made: response.status === 201, version: data.data };
}
