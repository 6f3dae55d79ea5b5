import type { Clock } from '../../clock.ts';
import type { Principal } from '../../http/auth.ts';
import { bumpAuthEpoch } from '../../http/auth-cache.ts';
import { badRequest, forbidden } from '../../http/errors.ts';
import type { Db } from '../../db/database.ts';
import { bumpCounter } from '../../db/counters.ts';
import { ROLES, type Permission, type Role } from './permissions.ts';
import { tokenCounters, toApiToken } from './tokens.repository.ts';
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
    const org = await db.kysely.selectFrom('organizations').select('id')
      .where('id', '=', organizationId).where('vendor_id', '=', input.vendorId).executeTakeFirst();
    if (!org) throw badRequest('Unknown organization', [{ path: 'organizationId', message: 'is not an organization of this vendor' }]);
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
  const counters = tokenCounters(input.vendorId, organizationId);
  await db.kysely.transaction().execute(async (trx) => {
    await trx.insertInto('api_tokens').values(row).execute();
    await bumpCounter(trx, counters.vendor, 1);
    if (organizationId) await bumpCounter(trx, counters.organization, 1);
  });
  return { ...toApiToken(row), token: secret.value };
}

/** Revokes a token and, down the line, every token it minted (and they minted), in one transaction. */
export async function revokeToken(db: Db, clock: Clock, tokenId: string): Promise<void> {
  const at = clock.now().toISOString();
  await db.kysely.transaction().execute(async (trx) => {
    let wave = [tokenId];
    const seen = new Set<string>();
    while (wave.length) {
      wave.forEach((id) => seen.add(id));
      await trx.updateTable('api_tokens').set({ revoked_at: at, updated_at: at }).where('id', 'in', wave).where('revoked_at', 'is', null).execute();
      const children = await trx.selectFrom('api_tokens').select('id').where('created_by', 'in', wave).execute();
      wave = children.map((c) => c.id).filter((id) => !seen.has(id));
    }
    await bumpAuthEpoch(trx);
  });
}
