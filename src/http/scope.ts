import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.ts';
import type { AuthCache } from './auth-cache.ts';
import type { Principal } from './auth.ts';
import { notFound } from './errors.ts';

export const VENDOR_PREFIX = '/api/v1/vendors/:vendorId';
export const ORG_PREFIX = `${VENDOR_PREFIX}/organizations/:organizationId`;

const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;

async function tenantExists(db: Db, vendorId: string, organizationId: string | null): Promise<void> {
  if (!UUID.test(vendorId)) throw notFound('Vendor');
  if (organizationId !== null) {
    if (!UUID.test(organizationId)) throw notFound('Organization');
    const org = await db.kysely.selectFrom('organizations').select('id')
      .where('id', '=', organizationId).where('vendor_id', '=', vendorId).executeTakeFirst();
    if (org) return;
  }
  const vendor = await db.kysely.selectFrom('vendors').select('id').where('id', '=', vendorId).executeTakeFirst();
  if (!vendor) throw notFound('Vendor');
  if (organizationId !== null) throw notFound('Organization');
}

/**
 * Registers routes under `/api/v1/vendors/:vendorId[/organizations/:organizationId]` with the
 * tenant hook in that scope: after authentication and authorisation (http/auth.ts), the path's
 * vendor and organization must exist (404 otherwise), remembered for as long as the auth epoch
 * holds. Routes inside use paths relative to the prefix.
 */
export function tenantScope(level: 'vendor' | 'organization', db: Db, cache: AuthCache<Principal>, routes: FastifyPluginAsync): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      const scope = (route.config as { auth?: { scope?: string } } | undefined)?.auth?.scope;
      if (scope !== level) throw new Error(`${String(route.method)} ${route.url} is registered under the ${level} scope but its auth rule says ${String(scope)}`);
    });
    // Not async: a tenant known in this epoch (nearly every request) passes without a promise.
    app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
      const { vendorId = '', organizationId = '' } = request.params as Record<string, string | undefined>;
      const key = `${level}:${vendorId}:${organizationId}`;
      if (cache.tenantKnown(key, request.authEpoch)) {
        request.tenantChecked = true;
        return done();
      }
      const epoch = request.authEpoch;
      tenantExists(db, vendorId, level === 'organization' ? organizationId : null).then(() => {
        cache.rememberTenant(key, epoch);
        request.tenantChecked = true;
        done();
      }, done);
    });
    await app.register(routes);
  };
}
