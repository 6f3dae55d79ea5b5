import type { Clock } from '../../clock.ts';
import { narrowedTo, type Principal } from '../../http/auth.ts';
import { bumpAuthEpoch } from '../../http/auth-cache.ts';
import { badRequest, forbidden, notFound } from '../../http/errors.ts';
import type { Db } from '../../db/database.ts';
import { ROLES, type Permission, type Role } from './permissions.ts';
import { findToken, insertToken, organizationOfVendor, revokeTokenTree, toApiToken } from './tokens.repository.ts';
import type { ApiTokenCreate } from './tokens.schemas.ts';
import { generateToken } from './token-secret.ts';

export interface TokenRequest extends ApiTokenCreate {
  vendorId: string;
}

/**
 * Creates an API token. Nobody can hand out more than they hold: an organization token only
 * mints tokens for its own organization, only with permissions it has itself, and never one
 * that outlives it (no expiry, or a later one, is refused). The new token remembers its creator:
 * revoking the creator revokes it too.
 */
export async function createToken(db: Db, clock: Clock, creator: Principal | null, input: TokenRequest) {
  if (input.role && input.permissions) throw badRequest('Give either role or permissions, not both', [{ path: 'permissions', message: 'conflicts with role' }]);
  if (!input.role && !input.permissions) throw badRequest('A token needs a role or permissions', [{ path: 'role', message: 'is required when permissions is absent' }]);
  const permissions: Permission[] = input.role ? [...ROLES[input.role as Role]] : (input.permissions as Permission[]);
  let organizationId = input.organizationId ?? null;
  const now = clock.now().getTime();
  const expiresAt = input.expiresAt ? Date.parse(input.expiresAt) : null;
  if (expiresAt !== null && expiresAt <= now) {
    throw badRequest('expiresAt must be in the future', [{ path: 'expiresAt', message: 'must be in the future' }]);
  }
  if (creator?.kind === 'token') {
    if (creator.organizationId) {
      if (organizationId && organizationId !== creator.organizationId) throw forbidden('Token is not valid for that organization');
      organizationId = creator.organizationId;
    }
    const missing = permissions.filter((p) => !creator.permissions.has(p));
    if (missing.length) throw forbidden(`Cannot grant permissions you do not hold: ${missing.join(', ')}`);
    const limit = creator.expiresAt === null ? null : Date.parse(creator.expiresAt);
    if (limit !== null && (expiresAt === null || expiresAt > limit)) {
      throw badRequest('A token cannot outlive the token that creates it', [{ path: 'expiresAt', message: `must be set, at or before ${creator.expiresAt} (when your token expires)` }]);
    }
  }
  if (organizationId) {
    if (!(await organizationOfVendor(db.kysely, input.vendorId, organizationId))) throw badRequest('Unknown organization', [{ path: 'organizationId', message: 'is not an organization of this vendor' }]);
  }
  const secret = generateToken();
  const at = new Date(now).toISOString();
  const row = {
    id: crypto.randomUUID(),
    vendor_id: input.vendorId,
    organization_id: organizationId,
    name: input.name,
    role: input.role ?? null,
    permissions: JSON.stringify(permissions),
    public_id: secret.publicId,
    secret_hash: secret.secretHash,
    created_at: at,
    updated_at: at,
    expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(),
    revoked_at: null,
    created_by: creator?.kind === 'token' ? creator.tokenId : null,
  };
  await db.kysely.transaction().execute((trx) => insertToken(trx, row));
  return { ...toApiToken(row), token: secret.value };
}


/** One token, as the caller may see it: an organization token sees only its organization's tokens. */
export async function getToken(db: Db, principal: Principal | null, vendorId: string, tokenId: string) {
  const row = await findToken(db.kysely, vendorId, tokenId, narrowedTo(principal));
  if (!row) throw notFound('API token');
  return toApiToken(row);
}

/** Revokes a token the caller may see and, down the line, every token it minted, in one transaction. */
export async function revokeToken(db: Db, clock: Clock, principal: Principal | null, vendorId: string, tokenId: string): Promise<void> {
  await getToken(db, principal, vendorId, tokenId);
  const at = clock.now().toISOString();
  await db.kysely.transaction().execute(async (trx) => {
    await revokeTokenTree(trx, tokenId, at);
    await bumpAuthEpoch(trx);
  });
}
