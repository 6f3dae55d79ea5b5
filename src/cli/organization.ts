import { ConfigError } from '../config.ts';
import { ApiError, type ApiClient } from './api-client.ts';

export interface Target {
  vendorId: string;
  organizationId: string;
  kind: 'assistant' | 'agent';
  id: string;
  name: string;
}

const orgPath = (vendorId: string, organizationId: string) => `/api/v1/vendors/${vendorId}/organizations/${organizationId}`;

/** The assistant, or else the agent, of that id in one organization; null when it has neither. */
async function findIn(api: ApiClient, vendorId: string, organizationId: string, id: string): Promise<Target | null> {
  for (const kind of ['assistant', 'agent'] as const) {
    try {
      const found = await api.request<{ name: string }>('GET', `${orgPath(vendorId, organizationId)}/${kind}s/${id}`);
      return { vendorId, organizationId, kind, id, name: found.data.name };
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) throw err;
    }
  }
  return null;
}

/** Every item of a list route, page by page. */
async function all(api: ApiClient, path: string): Promise<{ id: string }[]> {
  const items: { id: string }[] = [];
  for (let page = 0; ; page++) {
    const answer = await api.request<{ id: string }[]>('GET', `${path}?size=100&page=${page}`);
    items.push(...answer.data);
    if (page + 1 >= (answer.totalPages ?? 0)) return items;
  }
}

const UNKNOWN = 'set PARLEY_VENDOR and PARLEY_ORGANIZATION (parley setup prints them), or pass --vendor and --organization';

/**
 * Where an assistant or agent id lives. With the organization known (flags or environment) it
 * is one or two requests; without it, a token that may list vendors (the admin token) or the
 * vendor's organizations (a vendor token, with PARLEY_VENDOR) finds it by looking.
 */
export async function findTarget(api: ApiClient, id: string, known: { vendor: string | null; organization: string | null }): Promise<Target> {
  if (known.vendor && known.organization) {
    const found = await findIn(api, known.vendor, known.organization, id);
    if (!found) throw new ConfigError(`Organization ${known.organization} has no assistant or agent ${id}`);
    return found;
  }
  let vendors: string[];
  try {
    vendors = known.vendor ? [known.vendor] : (await all(api, '/api/v1/vendors')).map((v) => v.id);
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) throw new ConfigError(`This token cannot list vendors to find the organization of ${id}: ${UNKNOWN}`);
    throw err;
  }
  for (const vendorId of vendors) {
    const organizations = known.organization ? [{ id: known.organization }] : await all(api, `/api/v1/vendors/${vendorId}/organizations`);
    for (const organization of organizations) {
      const found = await findIn(api, vendorId, organization.id, id).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 403) return null;
        throw err;
      });
      if (found) return found;
    }
  }
  throw new ConfigError(`No assistant or agent ${id} in any organization this token can see; check the id, or ${UNKNOWN}`);
}
