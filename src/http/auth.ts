import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.ts';
import { readJson } from '../db/values.ts';
import { forbidden, notFound, unauthorized } from './errors.ts';
import type { Permission } from '../modules/tokens/permissions.ts';
import { hashSecret, parseToken, secretMatches } from '../modules/tokens/token-secret.ts';
import { timingSafeEqual } from 'node:crypto';
import { AuthCache } from './auth-cache.ts';

export type Principal =
  | { kind: 'admin' }
  | {
      kind: 'token';
      tokenId: string;
      vendorId: string;
      organizationId: string | null;
      permissions: ReadonlySet<Permission>;
    };

/** Who may call a route: nobody needs a token, only the platform admin, or a token within a vendor / organization. */
export type AuthRule =
  | { scope: 'public' }
  | { scope: 'admin' }
  | { scope: 'vendor' | 'organization'; permission: Permission };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRule;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;

export function hasPermission(principal: Principal, permission: Permission): boolean {
  return principal.kind === 'admin' || principal.permissions.has(permission);
}

async function authenticate(db: Db, adminHash: Buffer, value: string): Promise<{ principal: Principal; expiresAt: string | null }> {
  const parsed = parseToken(value);
  if (!parsed) {
    const given = Buffer.from(hashSecret(value), 'hex');
    if (timingSafeEqual(given, adminHash)) return { principal: { kind: 'admin' }, expiresAt: null };
    throw unauthorized();
  }
  const row = await db.kysely
    .selectFrom('api_tokens')
    .select(['id', 'vendor_id', 'organization_id', 'permissions', 'secret_hash', 'expires_at', 'revoked_at'])
    .where('public_id', '=', parsed.publicId)
    .executeTakeFirst();
  if (!row || !secretMatches(parsed.secret, row.secret_hash)) throw unauthorized();
  if (row.revoked_at) throw unauthorized('Token has been revoked');
  if (row.expires_at && row.expires_at <= new Date().toISOString()) throw unauthorized('Token has expired');
  const principal: Principal = {
    kind: 'token',
    tokenId: row.id,
    vendorId: row.vendor_id,
    organizationId: row.organization_id,
    permissions: new Set(readJson<Permission[]>(row.permissions)),
  };
  return { principal, expiresAt: row.expires_at };
}

/** Scope and permission, decided from the path alone so no database state leaks through a 403. */
function authorize(principal: Principal, rule: AuthRule, params: Record<string, string | undefined>): void {
  if (principal.kind === 'admin' || rule.scope === 'public') return;
  if (rule.scope === 'admin') throw forbidden('Only the platform admin may do this');
  if (params.vendorId !== principal.vendorId) throw forbidden('Token is not valid for this vendor');
  if (rule.scope === 'organization' && principal.organizationId && params.organizationId !== principal.organizationId) {
    throw forbidden('Token is not valid for this organization');
  }
  if (!principal.permissions.has(rule.permission)) throw forbidden(`Missing permission ${rule.permission}`);
}

async function checkTenantExists(db: Db, rule: AuthRule, params: Record<string, string | undefined>): Promise<void> {
  if (rule.scope !== 'vendor' && rule.scope !== 'organization') return;
  const { vendorId = '', organizationId = '' } = params;
  if (!UUID.test(vendorId)) throw notFound('Vendor');
  if (rule.scope === 'organization') {
    if (!UUID.test(organizationId)) throw notFound('Organization');
    const org = await db.kysely
      .selectFrom('organizations')
      .select('id')
      .where('id', '=', organizationId)
      .where('vendor_id', '=', vendorId)
      .executeTakeFirst();
    if (org) return;
  }
  const vendor = await db.kysely.selectFrom('vendors').select('id').where('id', '=', vendorId).executeTakeFirst();
  if (!vendor) throw notFound('Vendor');
  if (rule.scope === 'organization') throw notFound('Organization');
}

/**
 * The one place that decides 401, 403 and 404 for tenancy: every route declares an
 * `auth` rule in its config, and a route without one is refused rather than left open.
 */
export const authPlugin = fp(
  async (app: FastifyInstance, opts: { db: Db; adminTokenHash: string }) => {
    const adminHash = Buffer.from(opts.adminTokenHash, 'hex');
    const cache = new AuthCache<Principal>(opts.db);
    app.decorateRequest('principal', null);
    app.addHook('onRequest', async (request: FastifyRequest) => {
      const rule = request.routeOptions.config.auth;
      if (rule?.scope === 'public') return;
      if (!rule) {
        // Fail closed: an API route that forgot its rule is refused, not left open.
        if (request.is404 || !request.routeOptions.url?.startsWith('/api/')) return;
        throw forbidden('Route has no access rule');
      }
      const header = request.headers.authorization;
      const token = header ? /^Bearer ([\x21-\x7e]{1,512})$/.exec(header)?.[1] : undefined;
      if (!token) throw unauthorized();
      const epoch = await cache.epoch();
      const now = new Date().toISOString();
      let principal = cache.principal(token, epoch, now);
      if (!principal) {
        const found = await authenticate(opts.db, adminHash, token);
        principal = found.principal;
        cache.rememberPrincipal(token, principal, found.expiresAt, epoch);
      }
      const params = request.params as Record<string, string>;
      authorize(principal, rule, params);
      const tenantKey = `${rule.scope}:${params.vendorId}:${params.organizationId}`;
      if (!cache.tenantKnown(tenantKey, epoch)) {
        await checkTenantExists(opts.db, rule, params);
        cache.rememberTenant(tenantKey, epoch);
      }
      request.principal = principal;
    });
  },
  { name: 'parley-auth' },
);
