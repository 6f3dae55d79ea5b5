import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Context } from '../context.ts';
import { forbidden, unauthorized, type AppError } from './errors.ts';
import type { AuthCache } from './auth-cache.ts';

/** `<resource>:<read|write>`; the feature modules name the resources. */
export type Permission = `${string}:${'read' | 'write'}`;

export type Principal =
  | { kind: 'admin' }
  | {
      kind: 'token';
      tokenId: string;
      vendorId: string;
      organizationId: string | null;
      permissions: ReadonlySet<Permission>;
      /** The token's own expiry: what it mints may not outlive it. */
      expiresAt: string | null;
    };

/**
 * Who may call a route: nobody needs a token, any valid token (`token`: routes about the caller
 * itself, such as GET /api/v1/me), only the platform admin, or a token within a vendor / organization.
 */
export type AuthRule =
  | { scope: 'public' }
  | { scope: 'token' }
  | { scope: 'admin' }
  | { scope: 'vendor' | 'organization'; permission: Permission };

/** Turns a bearer token into a principal, or throws 401. Given by the tokens module (app.ts wires it). */
export type Authenticate = (token: string) => Promise<{ principal: Principal; expiresAt: string | null }>;

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRule;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** The auth epoch read for this request (tenant checks reuse it). */
    authEpoch: number;
    /** Set by the scope plugin once the path's vendor (and organization) are known to exist. */
    tenantChecked: boolean;
    /**
     * The database's change mark (Db.changeMark) taken as authentication began: a read kept
     * under the same mark is current for this request. Undefined before
     * authentication, on a public route, or where the database has no mark.
     */
    changeMark: number | undefined;
  }
}

/** The one organization a token is narrowed to, or null (the platform admin, or a vendor-wide token). */
export const narrowedTo = (principal: Principal | null): string | null => (principal?.kind === 'token' ? principal.organizationId : null);

/** Scope and permission, decided from the path alone so no database state leaks through a 403: the 403 to answer, if any. */
function refusal(principal: Principal, rule: AuthRule, params: Record<string, string | undefined>): AppError | undefined {
  if (principal.kind === 'admin' || rule.scope === 'public' || rule.scope === 'token') return undefined;
  if (rule.scope === 'admin') return forbidden('Only the platform admin may do this');
  if (params.vendorId !== principal.vendorId) return forbidden('Token is not valid for this vendor');
  if (rule.scope === 'organization' && principal.organizationId && params.organizationId !== principal.organizationId) {
    return forbidden('Token is not valid for this organization');
  }
  if (!principal.permissions.has(rule.permission)) return forbidden(`Missing permission ${rule.permission}`);
  return undefined;
}

/** `Authorization: Bearer <token>`; the scheme is case-insensitive (RFC 9110 §11.1). */
export function bearerToken(header: string | undefined): string | undefined {
  return header ? /^bearer ([\x21-\x7e]{1,512})$/i.exec(header)?.[1] : undefined;
}

/**
 * The one place that decides 401 and 403: every route declares an `auth` rule in its config,
 * and a route without one is refused rather than left open. Tenant existence (404) is checked
 * by the scope plugins the vendor and organization routes are registered under (http/scope.ts).
 */
export const authPlugin = fp(
  async (app: FastifyInstance, opts: { ctx: Context; authenticate: Authenticate; cache: AuthCache<Principal> }) => {
    const { cache } = opts;
    /** Authorises the request for `principal` under `epoch`: the error to answer, if any. */
    const admit = (request: FastifyRequest, principal: Principal, rule: AuthRule, epoch: number): AppError | undefined => {
      const refused = refusal(principal, rule, request.params as Record<string, string>);
      if (refused) return refused;
      request.principal = principal;
      request.authEpoch = epoch;
      return undefined;
    };
    /** The epoch read from the database, and the token looked up unless remembered in it. */
    const authenticateSlowly = async (request: FastifyRequest, rule: AuthRule, token: string, mark: number | undefined) => {
      const epoch = await cache.epoch(mark);
      let principal = cache.principal(token, epoch, opts.ctx.clock.now().getTime());
      if (!principal) {
        const found = await opts.authenticate(token);
        principal = found.principal;
        cache.rememberPrincipal(token, principal, found.expiresAt, epoch);
      }
      const error = admit(request, principal, rule, epoch);
      if (error) throw error;
    };
    app.decorateRequest('principal', null);
    app.decorateRequest('authEpoch', 0);
    app.decorateRequest('tenantChecked', false);
    app.decorateRequest('changeMark', undefined);
    // Not async: with the epoch known (no commit since it was read) and the token remembered,
    // the check runs without a promise or a database read.
    app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
      const rule = request.routeOptions.config.auth;
      if (rule?.scope === 'public') return done();
      if (!rule) {
        // Fail closed: an API route that forgot its rule is refused, not left open.
        if (request.is404 || !request.routeOptions.url?.startsWith('/api/')) return done();
        return done(forbidden('Route has no access rule'));
      }
      const token = bearerToken(request.headers.authorization);
      if (!token) return done(unauthorized());
      const mark = opts.ctx.db.changeMark?.();
      request.changeMark = mark;
      const epoch = cache.knownEpoch(mark);
      const principal = epoch === undefined ? undefined : cache.principal(token, epoch, opts.ctx.clock.now().getTime());
      if (epoch !== undefined && principal) return done(admit(request, principal, rule, epoch));
      authenticateSlowly(request, rule, token, mark).then(() => done(), done);
    });
    // A `token` route answers about the caller alone: with a vendor or organization in its path it
    // would skip both the path check of refusal() and the tenant hook, so it is refused at startup.
    app.addHook('onRoute', (route) => {
      const rule = route.config?.auth;
      if (rule?.scope === 'token' && /:(vendorId|organizationId)\b/.test(route.url)) {
        throw new Error(`${String(route.method)} ${route.url} has a tenant in its path but the token scope`);
      }
    });
    // Fail closed: a vendor or organization route must sit under its scope plugin, whose hook checks the tenant exists.
    app.addHook('preHandler', (request, _reply, done) => {
      const scope = request.routeOptions.config.auth?.scope;
      done((scope === 'vendor' || scope === 'organization') && !request.tenantChecked ? forbidden('Route has no tenant scope') : undefined);
    });
  },
  { name: 'parley-auth' },
);
