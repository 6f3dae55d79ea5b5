import { timingSafeEqual } from 'node:crypto';
import type { Authenticate, Permission, Principal } from '../../http/auth.ts';
import type { Context } from '../../context.ts';
import { readJson } from '../../db/values.ts';
import { unauthorized } from '../../http/errors.ts';
import { hashSecret, parseToken, secretMatches } from './token-secret.ts';

/**
 * Turns a bearer token into a principal: an API token (`prl_…`) by its public id and hashed
 * secret, or the platform admin token by its hash. Revoked and expired tokens are 401; expiry is
 * compared as an instant, whatever offset it was written with.
 */
export function tokenAuthenticator(ctx: Context, adminTokenHash: string): Authenticate {
  const adminHash = Buffer.from(adminTokenHash, 'hex');
  return async (value) => {
    const parsed = parseToken(value);
    if (!parsed) {
      const given = Buffer.from(hashSecret(value), 'hex');
      if (timingSafeEqual(given, adminHash)) return { principal: { kind: 'admin' }, expiresAt: null };
      throw unauthorized();
    }
    const row = await ctx.db.kysely
      .selectFrom('api_tokens')
      .select(['id', 'vendor_id', 'organization_id', 'permissions', 'secret_hash', 'expires_at', 'revoked_at'])
      .where('public_id', '=', parsed.publicId)
      .executeTakeFirst();
    if (!row || !secretMatches(parsed.secret, row.secret_hash)) throw unauthorized();
    if (row.revoked_at) throw unauthorized('Token has been revoked');
    if (row.expires_at && Date.parse(row.expires_at) <= ctx.clock.now().getTime()) throw unauthorized('Token has expired');
    const principal: Principal = {
      kind: 'token',
      tokenId: row.id,
      vendorId: row.vendor_id,
      organizationId: row.organization_id,
      permissions: new Set(readJson<Permission[]>(row.permissions)),
      expiresAt: row.expires_at,
    };
    return { principal, expiresAt: row.expires_at };
  };
}
