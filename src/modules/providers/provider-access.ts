import type { ResolveAccess } from '../../calls/providers/access.ts';
import { descriptorOf } from '../../calls/providers/registry.ts';
import type { Context } from '../../context.ts';
import { EgressError } from '../../egress/client.ts';
import { guardConnection } from '../../egress/connect-guard.ts';
import { resolveProviderAccess } from './providers.service.ts';

/** The organization's provider credential first, then the platform's (resolveProviderAccess), with the provider's public base URL last. */
export function organizationAccess(ctx: Pick<Context, 'db' | 'secrets' | 'config' | 'egress'>): ResolveAccess {
  return async (organizationId, provider) => {
    const access = await resolveProviderAccess(ctx, organizationId, provider);
    if (!access) return null;
    const baseUrl = access.baseUrl ?? descriptorOf(provider)?.defaultBaseUrl ?? '';
    if (!access.egressChecked) return { apiKey: access.apiKey, baseUrl };
    try {
      // A tenant's base URL: judged now when it is an address, and at every connection's DNS lookup when it is a name.
      return { apiKey: access.apiKey, baseUrl, lookup: guardConnection(baseUrl, ctx.egress.allow).lookup };
    } catch (error) {
      return { refused: error instanceof EgressError ? error.message : 'refused by the egress policy' };
    }
  };
}
