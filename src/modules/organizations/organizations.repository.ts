import { sql, type Insertable, type Selectable } from 'kysely';
import { bumpCounter, readCounter } from '../../db/counters.ts';
import type { Database, Executor } from '../../db/schema.ts';
import { BASE_SORT, fetchPage, type PageQuery } from '../../http/pagination.ts';
import type { OrganizationTable } from './organizations.table.ts';
import type { Organization } from './organizations.schemas.ts';

const counterOf = (vendorId: string) => `organizations:${vendorId}`;

export function toOrganization(row: Selectable<OrganizationTable>): Organization {
  return { id: row.id, vendorId: row.vendor_id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at };
}

export function findOrganization(db: Executor, vendorId: string, id: string) {
  return db.selectFrom('organizations').selectAll().where('vendor_id', '=', vendorId).where('id', '=', id).executeTakeFirst();
}

export async function hasOrganizations(db: Executor, vendorId: string): Promise<boolean> {
  return Boolean(await db.selectFrom('organizations').select('id').where('vendor_id', '=', vendorId).executeTakeFirst());
}

/** A vendor's organizations; `only` narrows the list to one (what an organization token may see). */
export async function listOrganizations(db: Executor, vendorId: string, only: string | null, query: PageQuery) {
  let select = db.selectFrom('organizations').selectAll().where('vendor_id', '=', vendorId);
  if (only) select = select.where('id', '=', only);
  const page = await fetchPage(select, query, BASE_SORT, only ? 1 : () => readCounter(db, counterOf(vendorId)));
  return { ...page, items: page.items.map(toOrganization) };
}

export async function insertOrganization(db: Executor, row: Insertable<OrganizationTable>): Promise<void> {
  await db.insertInto('organizations').values(row).execute();
  await bumpCounter(db, counterOf(row.vendor_id), 1);
}

export async function updateOrganizationRow(db: Executor, vendorId: string, id: string, set: Pick<OrganizationTable, 'name' | 'updated_at'>): Promise<void> {
  await db.updateTable('organizations').set(set).where('vendor_id', '=', vendorId).where('id', '=', id).execute();
}

export async function deleteOrganizationRow(db: Executor, vendorId: string, id: string): Promise<void> {
  await db.deleteFrom('organizations').where('vendor_id', '=', vendorId).where('id', '=', id).execute();
  await bumpCounter(db, counterOf(vendorId), -1);
}

/**
 * A table whose rows belong to an organization and block its deletion (409) while any exist.
 * The list is composed in app.ts from the feature modules; API tokens are not in it because
 * they go with the organization.
 */
export interface OrganizationDependent {
  table: keyof Database;
  label: string;
}

/** The first dependent table that still holds rows of the organization, if any. */
export async function firstDependent(db: Executor, organizationId: string, dependents: readonly OrganizationDependent[]) {
  for (const dependent of dependents) {
    const found = await db.selectFrom(dependent.table).select(sql`1`.as('one')).where(sql.ref('organization_id'), '=', organizationId).executeTakeFirst();
    if (found) return dependent;
  }
  return null;
}
