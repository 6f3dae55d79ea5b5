import type { Selectable } from 'kysely';
import type { ApiTokenTable } from './tokens.table.ts';
import { readJson } from '../../db/values.ts';
import type { ApiToken } from './tokens.schemas.ts';

export const tokenCounters = (vendorId: string, organizationId: string | null) => ({
  vendor: `api_tokens:${vendorId}`,
  organization: `api_tokens:${vendorId}:${organizationId ?? '-'}`,
});

export function toApiToken(row: Selectable<ApiTokenTable>): ApiToken {
  return {
    id: row.id,
    vendorId: row.vendor_id,
    organizationId: row.organization_id,
    name: row.name,
    role: row.role,
    permissions: readJson<ApiToken['permissions']>(row.permissions),
    prefix: `prl_${row.public_id}`,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}
