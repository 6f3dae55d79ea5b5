import { ConfigError } from '../config.ts';
import { ParleyError, type ApiClient } from './api-client.ts';

export interface Target {
  vendorId: string;
  organizationId: string;
  kind: 'assistant' | 'agent';
  id: string;
  name: string;
}

const refused = (err: unknown, status: number) => err instanceof ParleyError && err.status === status;

/** The assistant, or else the agent, of that id in one organization; null when it has neither. */
async function findIn({ parley }: ApiClient, vendorId: string, organizationId: string, id: string): Promise<Target | null> {
  const org = parley.organization(vendorId, organizationId);
  for (const kind of ['assistant', 'agent'] as const) {
    try {
      const found = kind === 'agent' ? await org.getAgent({ path: { agentId: id } }) : await org.getAssistant({ path: { assistantId: id } });
      return { vendorId, organizationId, kind, id, name: found.name };
    } catch (err) {
      if (!refused(err, 404)) throw err;
    }
  }
  return null;
}

async function ids(items: AsyncIterable<{ id: string }>): Promise<string[]> {
  const out: string[] = [];
  for await (const item of items) out.push(item.id);
  return out;
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
    vendors = known.vendor ? [known.vendor] : await ids(api.parley.paginate('listVendors'));
  } catch (err) {
    if (refused(err, 403)) throw new ConfigError(`This token cannot list vendors to find the organization of ${id}: ${UNKNOWN}`);
    throw err;
  }
  for (const vendorId of vendors) {
    const organizations = known.organization ? [known.organization] : await ids(api.parley.vendor(vendorId).paginate('listOrganizations'));
    for (const organizationId of organizations) {
      const found = await findIn(api, vendorId, organizationId, id).catch((err: unknown) => {
        if (refused(err, 403)) return null;
        throw err;
      });
      if (found) return found;
    }
  }
  throw new ConfigError(`No assistant or agent ${id} in any organization this token can see; check the id, or ${UNKNOWN}`);
}
