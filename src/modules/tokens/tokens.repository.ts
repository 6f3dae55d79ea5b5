import type { Insertable, Selectable } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import type { Executor } from '../../db/schema.ts';
import { readJson } from '../../db/values.ts';
import { BASE_SORT, fetchPage, type PageQuery } from '../../http/pagination.ts';
import type { ApiTokenTable } from './tokens.table.ts';
import type { ApiToken } from './tokens.schemas.ts';

/** Totals per vendor, and per vendor and organization (what an organization token lists). */
const countersOf = (vendorId: string, organizationId: string | null) => ({
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

/** `only`: the organization an organization token is narrowed to; it sees that one's tokens only. */
export function findToken(db: Executor, vendorId: string, id: string, only: string | null) {
  let query = db.selectFrom('api_tokens').selectAll().where('vendor_id', '=', vendorId).where('id', '=', id);
  if (only) query = query.where('organization_id', '=', only);
  return query.executeTakeFirst();
}

export async function listTokens(db: Executor, vendorId: string, only: string | null, query: PageQuery) {
  let select = db.selectFrom('api_tokens').selectAll().where('vendor_id', '=', vendorId);
  if (only) select = select.where('organization_id', '=', only);
  const counters = countersOf(vendorId, only);
  const page = await fetchPage(select, query, BASE_SORT, () => readCounter(db, only ? counters.organization : counters.vendor));
  return { ...page, items: page.items.map(toApiToken) };
}

export async function insertToken(db: Executor, row: Insertable<ApiTokenTable>): Promise<void> {
  const counters = countersOf(row.vendor_id, row.organization_id ?? null);
  await db.insertInto('api_tokens').values(row).execute();
  await bumpCounter(db, counters.vendor, 1);
  if (row.organization_id) await bumpCounter(db, counters.organization, 1);
}

/** Revokes the tokens and, down the line, every token they minted (and those minted), at `at`. */
export async function revokeTokenTree(db: Executor, tokenId: string, at: string): Promise<void> {
  let wave = [tokenId];
  const seen = new Set<string>();
  while (wave.length) {
    wave.forEach((id) => seen.add(id));
    await db.updateTable('api_tokens').set({ revoked_at: at, updated_at: at }).where('id', 'in', wave).where('revoked_at', 'is', null).execute();
    const children = await db.selectFrom('api_tokens').select('id').where('created_by', 'in', wave).execute();
    wave = children.map((c) => c.id).filter((id) => !seen.has(id));
  }
}

/** The tokens narrowed to an organization go with it (inside the organization's delete). */
export async function deleteOrganizationTokens(db: Executor, vendorId: string, organizationId: string): Promise<void> {
  const deleted = await db.deleteFrom('api_tokens').where('organization_id', '=', organizationId).executeTakeFirst();
  const counters = countersOf(vendorId, organizationId);
  await bumpCounter(db, counters.vendor, -Number(deleted.numDeletedRows));
  await db.deleteFrom('counters').where('key', '=', counters.organization).execute();
}

export async function organizationOfVendor(db: Executor, vendorId: string, organizationId: string): Promise<boolean> {
  return Boolean(await db.selectFrom('organizations').select('id').where('id', '=', organizationId).where('vendor_id', '=', vendorId).executeTakeFirst());
}

/** A token's name, to say who made something (versions); undefined when it is gone. */
export async function tokenNameOf(db: Executor, id: string): Promise<string | undefined> {
  return (await db.selectFrom('api_tokens').select('name').where('id', '=', id).executeTakeFirst())?.name;
}
