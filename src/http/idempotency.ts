import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../context.ts';
import { AppError, badRequest, conflict } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** POST creates that honour Idempotency-Key; 'sealed' keeps the stored response encrypted (it holds a secret). */
    idempotent?: true | 'sealed';
  }
  interface FastifyRequest {
    idempotency: { scope: string; key: string } | null;
  }
}

const KEY_PATTERN = '^[\\x21-\\x7e]{1,255}$';
const KEY = new RegExp(KEY_PATTERN);
/** The header as /openapi.json documents it on every create that honours it. */
export const IdempotencyKeyHeader = Type.String({
  pattern: KEY_PATTERN,
  description: 'Makes a retried create safe: a repeat with the same key and body answers the first 201 again (kept 24 hours); 1-255 printable ASCII characters',
});
/** How long a finished create's answer is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long an unfinished claim blocks its key. A create answers in well under a second; a claim
 * this old belongs to a process that died mid-request (kill -9), and the key is free again.
 */
export const IDEMPOTENCY_CLAIM_LEASE_MS = 60 * 1000;

/**
 * Keys belong to the caller that used them (the token, or the platform admin) within the path's
 * organization or vendor: another caller replaying the same key and body gets nothing of the
 * first answer (an API token minted for an admin stays the admin's).
 */
function scopeOf(request: FastifyRequest): string {
  const params = request.params as Record<string, string | undefined>;
  const principal = request.principal;
  const caller = principal?.kind === 'token' ? principal.tokenId : (principal?.kind ?? 'anonymous');
  return `${caller}:${params.organizationId ?? params.vendorId ?? 'platform'}`;
}

/**
 * `Idempotency-Key` for every POST create that opts in through its route config: a repeat
 * with the same body gets the first 201 again, byte for byte; the same key with another body
 * is a 422; a repeat while the first still runs is a 409. Keys are kept 24 hours per caller and
 * organization (or vendor). A create that fails keeps no key, so the corrected request can be
 * sent again with the same key; a claim left by a crashed process frees the key after a minute.
 */
export const idempotencyPlugin = fp(
  async (app: FastifyInstance, opts: { ctx: Context }) => {
    const { kysely } = opts.ctx.db;
    const { clock, secrets } = opts.ctx;
    app.decorateRequest('idempotency', null);

    const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
      const mode = request.routeOptions.config.idempotent;
      const key = request.headers['idempotency-key'];
      if (!mode || key === undefined) return;
      if (typeof key !== 'string' || !KEY.test(key)) {
        throw badRequest('Invalid Idempotency-Key', [{ path: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters' }]);
      }
      const scope = scopeOf(request);
      const hash = createHash('sha256').update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`).digest('hex');
      const now = clock.now().getTime();
      const expired = new Date(now - IDEMPOTENCY_TTL_MS).toISOString();
      const abandoned = new Date(now - IDEMPOTENCY_CLAIM_LEASE_MS).toISOString();
      await kysely.deleteFrom('idempotency_keys').where('scope', '=', scope).where('key', '=', key)
        .where((eb) => eb.or([eb('created_at', '<', expired), eb.and([eb('status_code', 'is', null), eb('created_at', '<', abandoned)])]))
        .execute();
      const inserted = await kysely
        .insertInto('idempotency_keys')
        .values({ scope, key, request_hash: hash, status_code: null, response_body: null, location: null, created_at: new Date(now).toISOString() })
        .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) {
        request.idempotency = { scope, key };
        return;
      }
      const first = await kysely.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirst();
      if (first && first.request_hash !== hash) throw new AppError(422, 'This Idempotency-Key was used with a different request');
      if (!first || first.status_code === null || first.response_body === null) {
        throw conflict('The first request with this Idempotency-Key is still running');
      }
      const body = mode === 'sealed' ? secrets.open(first.response_body) : first.response_body;
      reply.code(first.status_code).header('idempotent-replayed', 'true').type('application/json; charset=utf-8');
      if (first.location) reply.header('location', first.location);
      return reply.send(body);
    };

    const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const claim = request.idempotency;
      if (!claim) return payload;
      request.idempotency = null;
      const where = kysely.updateTable('idempotency_keys').where('scope', '=', claim.scope).where('key', '=', claim.key);
      if (reply.statusCode === 201 && typeof payload === 'string') {
        const body = request.routeOptions.config.idempotent === 'sealed' ? secrets.seal(payload) : payload;
        const location = reply.getHeader('location');
        await where.set({ status_code: 201, response_body: body, location: typeof location === 'string' ? location : null }).execute();
      } else {
        await kysely.deleteFrom('idempotency_keys').where('scope', '=', claim.scope).where('key', '=', claim.key).execute();
      }
      return payload;
    };

    // Only the routes that opt in carry the hooks, so every other request pays nothing for them.
    app.addHook('onRoute', (route) => {
      if (!(route.config as { idempotent?: unknown } | undefined)?.idempotent) return;
      route.preHandler = [...[route.preHandler ?? []].flat(), preHandler];
      route.onSend = [...[route.onSend ?? []].flat(), onSend];
    });
  },
  { name: 'parley-idempotency', dependencies: ['parley-auth'] },
);
