import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { OrganizationTable } from './organizations.table.ts';
import type { Organization } from './organizations.schemas.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export const orgCounter = (vendorId: string) => `organizations:${vendorId}`;

export function toOrganization(row: Selectable<OrganizationTable>): Organization {
  return { id: row.id, vendorId: row.vendor_id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at };
}

export function findOrganization(db: Executor, vendorId: string, id: string) {
  return db.selectFrom('organizations').selectAll().where('vendor_id', '=', vendorId).where('id', '=', id).executeTakeFirst();
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
