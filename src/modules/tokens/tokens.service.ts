import type { Principal } from '../../http/auth.ts';
import { badRequest, forbidden } from '../../http/errors.ts';
import type { Db } from '../../db/database.ts';
import { bumpCounter } from '../../db/counters.ts';
import { now } from '../../db/values.ts';
import { ROLES, type Permission, type Role } from './permissions.ts';
import { tokenCounters, toApiToken } from './tokens.repository.ts';
import type { ApiTokenCreate } from './tokens.schemas.ts';
import { generateToken } from './token-secret.ts';

export interface TokenRequest extends ApiTokenCreate {
  vendorId: string;
}

/**
 * Creates an API token. Nobody can hand out more than they hold: an organization token only
 * mints tokens for its own organization, and only with permissions it has itself.
 */
export async function createToken(db: Db, creator: Principal | null, input: TokenRequest) {
  if (input.role && input.permissions) throw badRequest('Give either role or permissions, not both', [{ path: 'permissions', message: 'conflicts with role' }]);
  if (!input.role && !input.permissions) throw badRequest('A token needs a role or permissions', [{ path: 'role', message: 'is required when permissions is absent' }]);
  const permissions: Permission[] = input.role ? [...ROLES[input.role as Role]] : (input.permissions as Permission[]);
  let organizationId = input.organizationId ?? null;
  if (creator?.kind === 'token') {
    if (creator.organizationId) {
      if (organizationId && organizationId !== creator.organizationId) throw forbidden('Token is not valid for that organization');
      organizationId = creator.organizationId;
    }
    const missing = permissions.filter((p) => !creator.permissions.has(p));
    if (missing.length) throw forbidden(`Cannot grant permissions you do not hold: ${missing.join(', ')}`);
  }
  if (input.expiresAt && input.expiresAt <= new Date().toISOString()) {
    throw badRequest('expiresAt must be in the future', [{ path: 'expiresAt', message: 'must be in the future' }]);
  }
  if (organizationId) {
    const org = await db.kysely.selectFrom('organizations').select('id')
      .where('id', '=', organizationId).where('vendor_id', '=', input.vendorId).executeTakeFirst();
    if (!org) throw badRequest('Unknown organization', [{ path: 'organizationId', message: 'is not an organization of this vendor' }]);
  }
  const secret = generateToken();
  const at = now();
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
    expires_at: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
    revoked_at: null,
  };
  const counters = tokenCounters(input.vendorId, organizationId);
  await db.kysely.transaction().execute(async (trx) => {
    await trx.insertInto('api_tokens').values(row).execute();
    await bumpCounter(trx, counters.vendor, 1);
    if (organizationId) await bumpCounter(trx, counters.organization, 1);
  });
  return { ...toApiToken(row), token: secret.value };
}
